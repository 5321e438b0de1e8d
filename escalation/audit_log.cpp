#include "escalation/audit_log.h"

#include <fcntl.h>
#include <pwd.h>
#include <syslog.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
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

// Refusals as "kind:subject" pairs (their evidence lines stay in the file), the changes a
// sandboxed attempt made one after the other.
std::string field_text(const std::string& key, const json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (!value.is_array() || (key != "refusals" && key != "changed_first")) return value.dump();
    std::string text;
    for (const auto& item : value)
        text += (text.empty() ? "" : ", ") +
                (item.is_string() ? item.get<std::string>()
                                  : item.value("kind", "") + ":" + item.value("subject", ""));
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

// syslog(3) waits when the daemon stops reading (once its socket's queue is full: ten lines on
// a default kernel), so the lines go out from a thread of their own and no decision waits for
// them. At exit a slow daemon gets a moment to take what is queued; then Caretz leaves anyway.
class SyslogSender {
public:
    static SyslogSender& instance() {
        static SyslogSender sender;
        return sender;
    }

    void send(std::string line) {
        std::lock_guard lock(state_->mutex);
        if (state_->queue.size() >= kMaxQueued) return;  // lost, like a datagram nobody reads
        state_->queue.push_back(std::move(line));
        state_->changed.notify_all();
    }

    ~SyslogSender() {
        std::unique_lock lock(state_->mutex);
        state_->stopping = true;
        state_->changed.notify_all();
        bool sent = state_->changed.wait_for(lock, std::chrono::seconds(2), [&] {
            return state_->queue.empty() && !state_->sending;
        });
        lock.unlock();
        // A thread stuck in syslog(3) keeps the state it shares alive and ends with the process.
        if (sent) {
            worker_.join();
        } else {
            worker_.detach();
        }
    }

private:
    static constexpr size_t kMaxQueued = 1000;
    struct State {
        std::mutex mutex;
        std::condition_variable changed;
        std::deque<std::string> queue;
        bool sending = false;
        bool stopping = false;
    };

    SyslogSender() {
        ::openlog("caretz", LOG_PID, LOG_AUTHPRIV);
        worker_ = std::thread([state = state_] { run(*state); });
    }

    static void run(State& state) {
        std::unique_lock lock(state.mutex);
        while (true) {
            state.changed.wait(lock, [&] { return !state.queue.empty() || state.stopping; });
            if (state.queue.empty()) return;
            std::string line = std::move(state.queue.front());
            state.queue.pop_front();
            state.sending = true;
            lock.unlock();
            ::syslog(LOG_AUTHPRIV | LOG_NOTICE, "%s", line.c_str());
            lock.lock();
            state.sending = false;
            state.changed.notify_all();
        }
    }

    std::shared_ptr<State> state_ = std::make_shared<State>();
    std::thread worker_;
};

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
    SyslogSender::instance();
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
    if (entry.changed) {
        json first = json::array();
        for (const auto& c : entry.changed->kept) {
            if (first.size() == kAuditedChanges) break;
            first.push_back(std::string(to_string(c.kind)) + " " +
                            (c.from.empty() ? c.path : c.from + " -> " + c.path));
        }
        line["changed"] = entry.changed->count;
        if (!first.empty()) line["changed_first"] = std::move(first);
        if (!entry.changed->incomplete.empty())
            line["changed_incomplete"] = entry.changed->incomplete;
    }
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

bool AuditLog::append_repository(const std::string& session_id, std::string_view action,
                                 const std::string& path, const std::string& detail,
                                 const std::string& aside) const {
    json line = {{"time", utc_timestamp()}, {"event", "repository"}, {"session", session_id},
                 {"action", action},        {"path", path},          {"detail", detail},
                 {"aside", aside}};
    return write_line(line);
}

bool AuditLog::write_line(const json& line) const {
    if (!append_to_file(line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"))
        return false;
    // Only what the file holds is mirrored, so syslog never shows a decision the file lacks.
    if (to_syslog_) SyslogSender::instance().send(audit_syslog_line(line, user_));
    return true;
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

bool AuditLog::append_to_file(const std::string& text) const {
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
