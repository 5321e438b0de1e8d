#include "escalation/audit_log.h"

#include <fcntl.h>
#include <pwd.h>
#include <syslog.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "escalation/offer.h"

namespace caretz {

using nlohmann::json;

namespace {

// A value that is one plain word goes as it is; anything else is quoted.
bool plain_word(std::string_view text) {
    if (text.empty()) return false;
    for (unsigned char c : text)
        if (!std::isalnum(c) &&
            std::string_view("._/:@+-").find(static_cast<char>(c)) == std::string_view::npos)
            return false;
    return true;
}

std::string syslog_value(std::string_view text) {
    if (plain_word(text)) return std::string(text);
    // shown_escaped doubles backslashes, so the \" added after it cannot be mistaken.
    std::string quoted = "\"";
    for (char c : shown_escaped(text)) {
        if (c == '"') quoted += '\\';
        quoted += c;
    }
    return quoted + '"';
}

// Refusals as "kind:subject" pairs; their evidence lines stay in the file.
std::string field_text(const std::string& key, const json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (key != "refusals" || !value.is_array()) return value.dump();
    std::string text;
    for (const auto& r : value)
        text += (text.empty() ? "" : ", ") + r.value("kind", "") + ":" + r.value("subject", "");
    return text;
}

std::string user_name() {
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    uid_t uid = ::getuid();
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found) return pw.pw_name;
    return std::to_string(uid);
}

}  // namespace

std::string audit_syslog_line(const json& line, std::string_view user) {
    auto field = [&](const std::string& key) {
        return " " + key + "=" + syslog_value(field_text(key, line.at(key)));
    };
    std::string text = "event=" + syslog_value(line.value("event", ""));
    if (line.contains("decision")) text += field("decision");
    text += " user=" + syslog_value(user);
    for (const auto& [key, value] : line.items())
        if (key != "event" && key != "decision" && key != "time" && key != "command")
            text += field(key);
    if (line.contains("command")) text += field("command");
    return text;
}

AuditLog::AuditLog(std::string path, bool to_syslog)
    : path_(std::move(path)), to_syslog_(to_syslog) {
    if (!to_syslog_) return;
    user_ = user_name();
    ::openlog("caretz", LOG_PID, LOG_AUTHPRIV);
}

std::string utc_timestamp() {
    std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string AuditLog::default_path(const std::string& home) {
    const char* state = std::getenv("XDG_STATE_HOME");
    std::string base = (state && state[0] == '/') ? state : home + "/.local/state";
    return base + "/caretz/audit.jsonl";
}

bool AuditLog::append(const AuditEntry& entry) const {
    json refusals = json::array();
    for (const auto& r : entry.refusals) {
        json refusal = {
            {"kind", to_string(r.kind)}, {"subject", r.subject}, {"evidence", r.evidence}};
        if (!r.origin.empty()) refusal["origin"] = r.origin;
        refusals.push_back(std::move(refusal));
    }
    json line = {{"time", utc_timestamp()},     {"event", "offer"},
                 {"session", entry.session_id}, {"source", entry.source},
                 {"command", entry.command},    {"cwd", entry.cwd},
                 {"refusals", refusals},        {"decision", to_string(entry.decision)}};
    return write_line(line);
}

bool AuditLog::append_rerun_exit(const AuditEntry& entry, int exit_code) const {
    json line = {
        {"time", utc_timestamp()},  {"event", "rerun_finished"}, {"session", entry.session_id},
        {"command", entry.command}, {"cwd", entry.cwd},          {"rerun_exit", exit_code}};
    return write_line(line);
}

bool AuditLog::append_network(const std::string& session_id, const std::string& host, uint16_t port,
                              std::string_view decision) const {
    json line = {{"time", utc_timestamp()},
                 {"event", "network"},
                 {"session", session_id},
                 {"host", host},
                 {"port", port},
                 {"decision", decision}};
    return write_line(line);
}

bool AuditLog::write_line(const json& line) const {
    if (!append_to_file(line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"))
        return false;
    // Only what the file holds is mirrored, so syslog never shows a decision the file lacks.
    if (to_syslog_)
        ::syslog(LOG_AUTHPRIV | LOG_NOTICE, "%s", audit_syslog_line(line, user_).c_str());
    return true;
}

bool AuditLog::append_to_file(const std::string& text) const {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    ssize_t n = ::write(fd, text.data(), text.size());
    bool whole = n == static_cast<ssize_t>(text.size());
    if (n > 0 && !whole) {
        // A short write (disk full) leaves part of a line: cut it off again.
        off_t end = ::lseek(fd, 0, SEEK_END);
        if (end >= n) [[maybe_unused]]
            int r = ::ftruncate(fd, end - n);
    }
    bool synced = whole && ::fsync(fd) == 0;
    ::close(fd);
    return synced;
}

}  // namespace caretz
