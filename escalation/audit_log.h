#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escalation/decision.h"
#include "escalation/refusal.h"
#include "sandbox/change_record.h"

namespace caretz {

// The current time as ISO 8601 UTC ("2026-11-29T09:34:05Z"), as the state files record it.
std::string utc_timestamp();

struct AuditEntry {
    std::string session_id;
    std::string source;  // model, user, subagent, background
    std::string command;
    std::string cwd;
    std::vector<Refusal> refusals;
    Decision decision = Decision::deny;
    // What the sandboxed attempt had changed when the decision was made: the line keeps the
    // count and the first kAuditedChanges paths.
    std::optional<ChangeList> changed;
};

inline constexpr size_t kAuditedChanges = 5;

// One audit line as syslog shows it: key=value fields, `event` and `decision` first and the
// command last (a syslog daemon that cuts long messages cuts the command, never the decision),
// without the time (syslog stamps its own). A value that is not one plain word is quoted, with
// `"` and `\` escaped and every control character, escape sequence and hidden character shown
// as the offer shows it, so no command can end the line or pose as another field.
std::string audit_syslog_line(const nlohmann::json& line, std::string_view user);

// Appends one JSON line per offer to $XDG_STATE_HOME/caretz/audit.jsonl. Each line goes out in
// a single write and is flushed to disk before a rerun starts, so the log never holds half a
// line and never misses an approval.
//
// With `to_syslog` (config `audit.syslog`), each line the file took also goes to syslog(3),
// ident "caretz", facility authpriv (where sudo logs), with the user's name, from a thread of
// its own. The file stays the record: a syslog that is missing, down or stuck loses its copy and
// neither delays nor changes a decision, while a line the file cannot take still stops the
// rerun.
class AuditLog {
public:
    AuditLog(std::string path, bool to_syslog);
    // The default path for the user whose home is `home`.
    static std::string default_path(const std::string& home);

    // One "offer" line per offer (and per use of a session allowance). False when the line
    // could not be written whole; then nothing may run outside.
    bool append(const AuditEntry& entry) const;
    // A "rerun_finished" line with the exit status of a command that ran outside.
    bool append_rerun_exit(const AuditEntry& entry, int exit_code) const;
    // A "network" line: a destination outside the allowed list, and what became of it
    // (denied_by_policy, allow_once, allow_session, session_allowance, deny, timeout,
    // nobody_to_ask).
    bool append_network(const std::string& session_id, const std::string& host, uint16_t port,
                        std::string_view decision) const;
    // Whether a line could be appended now (its folder made, the file opened for appending),
    // without writing one: nullopt when it could, else why not (errno's words).
    std::optional<std::string> unwritable_reason() const;
    // A "repository" line: what Caretz did about a git repository a sandboxed command made or
    // changed (`action`: repository_protected, hook_disabled, config_stripped, ...), with the
    // path, the detail (what was left out, why it failed) and where the original now is.
    bool append_repository(const std::string& session_id, std::string_view action,
                           const std::string& path, const std::string& detail,
                           const std::string& aside) const;
    const std::string& path() const { return path_; }

private:
    bool write_line(const nlohmann::json& line) const;
    // The log opened for appending, its folder made first; -1 with errno set when it cannot be.
    int open_for_append() const;
    bool append_to_file(const std::string& text) const;
    std::string path_;
    bool to_syslog_;
    std::string user_;  // who runs Caretz, by uid: syslog gathers every user's lines
};

}  // namespace caretz
