#include "escalation/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace caretz {

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
    nlohmann::json refusals = nlohmann::json::array();
    for (const auto& r : entry.refusals) {
        nlohmann::json refusal = {
            {"kind", to_string(r.kind)}, {"subject", r.subject}, {"evidence", r.evidence}};
        if (!r.origin.empty()) refusal["origin"] = r.origin;
        refusals.push_back(std::move(refusal));
    }
    nlohmann::json line = {{"time", utc_timestamp()},     {"event", "offer"},
                           {"session", entry.session_id}, {"source", entry.source},
                           {"command", entry.command},    {"cwd", entry.cwd},
                           {"refusals", refusals},        {"decision", to_string(entry.decision)}};
    return write_line(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

bool AuditLog::append_rerun_exit(const AuditEntry& entry, int exit_code) const {
    nlohmann::json line = {
        {"time", utc_timestamp()},  {"event", "rerun_finished"}, {"session", entry.session_id},
        {"command", entry.command}, {"cwd", entry.cwd},          {"rerun_exit", exit_code}};
    return write_line(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

bool AuditLog::append_network(const std::string& session_id, const std::string& host, uint16_t port,
                              std::string_view decision) const {
    nlohmann::json line = {{"time", utc_timestamp()},
                           {"event", "network"},
                           {"session", session_id},
                           {"host", host},
                           {"port", port},
                           {"decision", decision}};
    return write_line(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

int AuditLog::open_for_append() const {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    return ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

std::optional<std::string> AuditLog::unwritable_reason() const {
    int fd = open_for_append();
    if (fd < 0) return std::string(std::strerror(errno));
    ::close(fd);
    return std::nullopt;
}

bool AuditLog::write_line(const std::string& text) const {
    int fd = open_for_append();
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
