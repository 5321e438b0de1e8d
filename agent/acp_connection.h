#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "agent/acp_jsonrpc.h"

namespace caretz {

// Caretz's side of an ACP connection: writes messages to the client, one line each, from any
// thread, and matches the client's answers to Caretz's own requests. Reading is the server's
// job; it hands every response here (deliver), so a thread waiting for an answer never reads.
class AcpConnection {
public:
    explicit AcpConnection(int out_fd) : out_fd_(out_fd) {}
    AcpConnection(const AcpConnection&) = delete;
    AcpConnection& operator=(const AcpConnection&) = delete;

    void send(const nlohmann::json& message);
    void notify(const std::string& method, nlohmann::json params);
    // A `session/update` notification carrying `update`.
    void session_update(const std::string& session_id, nlohmann::json update);

    // How a request of Caretz's ended.
    struct Answer {
        enum class Kind { result, error, timeout, withdrawn, closed };
        Kind kind = Kind::closed;
        nlohmann::json result;
    };
    // Sends a request and waits for its answer, until `deadline` (if any) passes, `withdrawn`
    // turns true (checked whenever wake() is called) or the connection closes. An answer that
    // comes after the wait gave up is dropped.
    Answer request(const std::string& method, nlohmann::json params,
                   std::optional<std::chrono::steady_clock::time_point> deadline,
                   const std::function<bool()>& withdrawn);
    // Hands the client's response to the request waiting for it; false when none waits.
    bool deliver(const JsonRpcMessage& response);
    // Makes waiting requests check again whether they were withdrawn.
    void wake();
    // The client is gone: every waiting request ends, and new ones end at once.
    void close();

private:
    struct Pending {
        bool answered = false;
        JsonRpcMessage response;
    };

    int out_fd_;
    std::mutex write_mutex_;
    std::mutex mutex_;  // guards what follows
    std::condition_variable changed_;
    std::map<long long, Pending> pending_;
    long long next_id_ = 0;
    bool closed_ = false;
};

// A tool call's content in ACP: one block of text.
nlohmann::json acp_text_content(const std::string& text);

}  // namespace caretz
