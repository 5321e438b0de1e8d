#include "agent/acp_connection.h"

#include "pty/fd_io.h"

namespace caretz {

void AcpConnection::send(const nlohmann::json& message) {
    std::string line = jsonrpc_line(message);
    // One write per message under the lock: lines from different threads never interleave.
    std::lock_guard lock(write_mutex_);
    write_all(out_fd_, line);
}

void AcpConnection::notify(const std::string& method, nlohmann::json params) {
    send(jsonrpc_notification(method, std::move(params)));
}

void AcpConnection::session_update(const std::string& session_id, nlohmann::json update) {
    notify("session/update", {{"sessionId", session_id}, {"update", std::move(update)}});
}

AcpConnection::Answer AcpConnection::request(
    const std::string& method, nlohmann::json params,
    std::optional<std::chrono::steady_clock::time_point> deadline,
    const std::function<bool()>& withdrawn) {
    long long id;
    {
        std::lock_guard lock(mutex_);
        if (closed_) return {};
        id = next_id_++;
        pending_[id];
    }
    send(jsonrpc_request(id, method, std::move(params)));

    std::unique_lock lock(mutex_);
    Answer answer;
    auto ended = [&] {
        if (pending_[id].answered) return true;
        if (closed_) {
            answer.kind = Answer::Kind::closed;
            return true;
        }
        if (withdrawn && withdrawn()) {
            answer.kind = Answer::Kind::withdrawn;
            return true;
        }
        return false;
    };
    bool done =
        deadline ? changed_.wait_until(lock, *deadline, ended) : (changed_.wait(lock, ended), true);
    Pending pending = std::move(pending_[id]);
    pending_.erase(id);
    if (pending.answered) {
        const bool failed = !pending.response.error.is_null();
        answer.kind = failed ? Answer::Kind::error : Answer::Kind::result;
        answer.result = failed ? pending.response.error : pending.response.result;
    } else if (!done) {
        answer.kind = Answer::Kind::timeout;
    }
    return answer;
}

bool AcpConnection::deliver(const JsonRpcMessage& response) {
    if (!response.id.is_number_integer()) return false;
    std::lock_guard lock(mutex_);
    auto it = pending_.find(response.id.get<long long>());
    if (it == pending_.end() || it->second.answered) return false;
    it->second.answered = true;
    it->second.response = response;
    changed_.notify_all();
    return true;
}

void AcpConnection::wake() {
    std::lock_guard lock(mutex_);
    changed_.notify_all();
}

void AcpConnection::close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
}

nlohmann::json acp_text_content(const std::string& text) {
    return nlohmann::json::array(
        {{{"type", "content"}, {"content", {{"type", "text"}, {"text", text}}}}});
}

}  // namespace caretz
