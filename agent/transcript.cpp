#include "agent/transcript.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "escalation/audit_log.h"
#include "sandbox/host_fs.h"

namespace caretz {

nlohmann::json transcript_header(const std::string& session_id, const ModelSettings& model,
                                 const std::string& cwd) {
    return {{"session_id", session_id},
            {"provider", model.provider == Provider::anthropic ? "anthropic" : "openai"},
            {"model", model.model},
            {"base_url", model.base_url},
            {"cwd", cwd}};
}

std::optional<TranscriptLock> TranscriptLock::take(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        throw std::runtime_error("cannot open the transcript " + path + ": " +
                                 std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return std::nullopt;
    }
    return TranscriptLock(fd);
}

TranscriptLock::~TranscriptLock() {
    if (fd_ >= 0) ::close(fd_);
}

std::string Transcript::sessions_dir(const std::string& home) {
    // Beside the audit log, in Caretz's state folder.
    return std::filesystem::path(AuditLog::default_path(home)).parent_path() / "sessions";
}

std::string Transcript::history_path(const std::string& home) {
    return std::filesystem::path(AuditLog::default_path(home)).parent_path() / "history";
}

void Transcript::record(nlohmann::json entry) {
    if (!started_) {
        started_ = true;
        make_private_folder(std::filesystem::path(path_).parent_path());
        header_["type"] = "session";
        append_line(header_);
        // So that no `caretz --continue` elsewhere writes this conversation while it goes on.
        try {
            lock_ = TranscriptLock::take(path_);
        } catch (const std::runtime_error&) {
            // The write above failed too, and problem() says so.
        }
    }
    append_line(entry);
}

void Transcript::append_line(const nlohmann::json& fields) {
    nlohmann::json entry = fields;
    entry["time"] = utc_timestamp();
    std::string line = entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ssize_t written = fd < 0 ? -1 : ::write(fd, line.data(), line.size());
    int error = errno;
    if (fd >= 0) ::close(fd);
    if (written != static_cast<ssize_t>(line.size()) && problem_.empty())
        problem_ = "cannot write the transcript " + path_ + ": " + std::strerror(error);
}

}  // namespace caretz
