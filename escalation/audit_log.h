#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escalation/decision.h"
#include "escalation/refusal.h"

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
};

// Appends one JSON line per offer to $XDG_STATE_HOME/caretz/audit.jsonl. Each line goes out in
// a single write and is flushed to disk before a rerun starts, so the log never holds half a
// line and never misses an approval.
class AuditLog {
public:
    explicit AuditLog(std::string path) : path_(std::move(path)) {}
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
    const std::string& path() const { return path_; }

private:
    // The log opened for appending, its folder made first; -1 with errno set when it cannot be.
    int open_for_append() const;
    bool write_line(const std::string& text) const;
    std::string path_;
};

}  // namespace caretz
