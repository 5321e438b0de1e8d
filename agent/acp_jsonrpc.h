#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace caretz {

// JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object).
enum JsonRpcCode : int {
    kParseError = -32700,
    kInvalidRequest = -32600,
    kMethodNotFound = -32601,
    kInvalidParams = -32602,
    kInternalError = -32603,
};

// One message read from the peer.
struct JsonRpcMessage {
    enum class Kind { request, notification, response };
    Kind kind = Kind::notification;
    nlohmann::json id;      // requests and responses: a string or a number
    std::string method;     // requests and notifications
    nlohmann::json params;  // an object, an array, or null when absent
    nlohmann::json result;  // responses that succeeded
    nlohmann::json error;   // responses that failed: the error object; null otherwise
};

// A line read from the peer: the message, or the error response to send back instead (a line
// that is no JSON, or no valid JSON-RPC 2.0 message); neither for a line to drop unanswered.
struct JsonRpcParse {
    std::optional<JsonRpcMessage> message;
    nlohmann::json error_reply;
};

// Parses one line of the newline-delimited stream. Batches (arrays) are not supported and
// answered as invalid requests.
JsonRpcParse parse_jsonrpc_line(std::string_view line);

nlohmann::json jsonrpc_result(const nlohmann::json& id, nlohmann::json result);
nlohmann::json jsonrpc_error(const nlohmann::json& id, int code, const std::string& message);
nlohmann::json jsonrpc_request(const nlohmann::json& id, const std::string& method,
                               nlohmann::json params);
nlohmann::json jsonrpc_notification(const std::string& method, nlohmann::json params);

// The message as one compact line with its newline; invalid UTF-8 (from a command's output)
// becomes U+FFFD instead of breaking the stream.
std::string jsonrpc_line(const nlohmann::json& message);

}  // namespace caretz
