// `caretz acp` reads whatever the editor (or anything pretending to be it) writes on stdin, a
// line at a time. Whatever the line: parsing yields a message, an error reply to send back, or
// neither, never a crash or any other exception; an error reply carries one of JSON-RPC's
// codes; and what Caretz writes back is always one line of valid JSON that reads as it was
// meant.

#include <string>

#include "agent/acp_jsonrpc.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

namespace {

// A line Caretz writes: one line, valid JSON, parsing back to `message`.
void check_written(const nlohmann::json& message) {
    std::string line = jsonrpc_line(message);
    require(!line.empty() && line.back() == '\n', "a written message does not end its line");
    require(line.find('\n') == line.size() - 1, "a written message spans lines");
    auto back = nlohmann::json::parse(line, nullptr, false);
    require(!back.is_discarded(), "a written message is not valid JSON");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view line(reinterpret_cast<const char*>(data), size);
    JsonRpcParse parsed = parse_jsonrpc_line(line);
    require(!(parsed.message && !parsed.error_reply.is_null()),
            "a line gave both a message and an error reply");
    if (!parsed.error_reply.is_null()) {
        const auto& error = parsed.error_reply.at("error");
        const int code = error.at("code").get<int>();
        require(code == kParseError || code == kInvalidRequest, "an error reply with another code");
        check_written(parsed.error_reply);
    }
    if (parsed.message) {
        const JsonRpcMessage& m = *parsed.message;
        if (m.kind != JsonRpcMessage::Kind::notification)
            require(m.id.is_string() || m.id.is_number(),
                    "a request or response without a usable id");
        if (m.kind != JsonRpcMessage::Kind::response) {
            // Caretz's answers: a result, and every error it may send for this request.
            check_written(jsonrpc_result(m.id, m.params));
            check_written(jsonrpc_error(m.id, kMethodNotFound, "unknown method " + m.method));
            // What it reads back of a message it writes itself is that message.
            nlohmann::json params = m.params.is_null() ? nlohmann::json::object() : m.params;
            JsonRpcParse again = parse_jsonrpc_line(jsonrpc_line(
                m.kind == JsonRpcMessage::Kind::request ? jsonrpc_request(m.id, m.method, params)
                                                        : jsonrpc_notification(m.method, params)));
            require(again.message && again.message->method == m.method,
                    "a request Caretz writes does not read back as itself");
        }
    }
    return 0;
}
