#include "agent/acp_jsonrpc.h"

namespace caretz {

namespace {

JsonRpcParse invalid(const nlohmann::json& id, const std::string& why) {
    return {std::nullopt, jsonrpc_error(id, kInvalidRequest, "Invalid request: " + why)};
}

bool valid_id(const nlohmann::json& id) {
    return id.is_string() || id.is_number_integer();
}

}  // namespace

JsonRpcParse parse_jsonrpc_line(std::string_view line) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) return {std::nullopt, jsonrpc_error(nullptr, kParseError, "Parse error")};
    if (!j.is_object()) return invalid(nullptr, "a message is one JSON object");
    // Answer with the id when it is one, so the peer can match the error to its request.
    nlohmann::json id = j.contains("id") && valid_id(j["id"]) ? j["id"] : nlohmann::json();
    const bool has_result = j.contains("result"), has_error = j.contains("error");
    // A response without a usable id (the peer's error about a line it could not read) is
    // dropped: answering it could start an endless exchange of errors.
    if (!j.contains("method") && (has_result || has_error) && id.is_null()) return {};
    if (j.value("jsonrpc", nlohmann::json()) != "2.0")
        return invalid(id, "\"jsonrpc\" must be \"2.0\"");
    if (j.contains("id") && !valid_id(j["id"]))
        return invalid(nullptr, "\"id\" must be a string or an integer");

    JsonRpcMessage m;
    m.id = id;
    if (j.contains("method")) {
        if (!j["method"].is_string()) return invalid(id, "\"method\" must be a string");
        m.method = j["method"].get<std::string>();
        m.kind =
            j.contains("id") ? JsonRpcMessage::Kind::request : JsonRpcMessage::Kind::notification;
        if (j.contains("params")) {
            m.params = j["params"];
            if (!m.params.is_object() && !m.params.is_array())
                return invalid(id, "\"params\" must be an object or an array");
        }
        return {m, nullptr};
    }
    if (!j.contains("id") || has_result == has_error)
        return invalid(id,
                       "a message needs a \"method\", or an \"id\" with \"result\" or \"error\"");
    m.kind = JsonRpcMessage::Kind::response;
    if (has_result) m.result = j["result"];
    if (has_error) {
        m.error = j["error"];
        if (!m.error.is_object()) return invalid(id, "\"error\" must be an object");
    }
    return {m, nullptr};
}

nlohmann::json jsonrpc_result(const nlohmann::json& id, nlohmann::json result) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

nlohmann::json jsonrpc_error(const nlohmann::json& id, int code, const std::string& message) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

nlohmann::json jsonrpc_request(const nlohmann::json& id, const std::string& method,
                               nlohmann::json params) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

nlohmann::json jsonrpc_notification(const std::string& method, nlohmann::json params) {
    return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

std::string jsonrpc_line(const nlohmann::json& message) {
    return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace caretz
