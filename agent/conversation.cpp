#include "agent/conversation.h"

#include <stdexcept>

namespace caretz {

nlohmann::json arguments_object(const std::string& arguments) {
    nlohmann::json parsed = nlohmann::json::parse(arguments, nullptr, false);
    return parsed.is_object() ? parsed : nlohmann::json::object();
}

namespace {

const char* role_name(Message::Role role) {
    switch (role) {
        case Message::Role::user:
            return "user";
        case Message::Role::assistant:
            return "assistant";
        case Message::Role::tool:
            return "tool";
    }
    return "user";
}

std::string string_field(const nlohmann::json& json, const char* name, bool required) {
    if (json.contains(name) && json[name].is_string()) return json[name].get<std::string>();
    if (required || json.contains(name))
        throw std::invalid_argument(std::string("\"") + name + "\" must be a string");
    return "";
}

}  // namespace

nlohmann::json message_json(const Message& message) {
    nlohmann::json out = {{"role", role_name(message.role)}, {"text", message.text}};
    if (!message.tool_calls.empty()) {
        nlohmann::json calls = nlohmann::json::array();
        for (const auto& c : message.tool_calls)
            calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
        out["tool_calls"] = std::move(calls);
    }
    if (message.role == Message::Role::tool) out["tool_call_id"] = message.tool_call_id;
    return out;
}

nlohmann::json conversation_json(const Conversation& conversation) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : conversation) list.push_back(message_json(m));
    return list;
}

Message message_from_json(const nlohmann::json& json) {
    if (!json.is_object()) throw std::invalid_argument("a message must be an object");
    Message m;
    const std::string role = string_field(json, "role", true);
    if (role == "user") {
        m.role = Message::Role::user;
    } else if (role == "assistant") {
        m.role = Message::Role::assistant;
    } else if (role == "tool") {
        m.role = Message::Role::tool;
    } else {
        throw std::invalid_argument("\"role\" must be user, assistant or tool");
    }
    m.text = string_field(json, "text", true);
    if (m.role == Message::Role::tool) m.tool_call_id = string_field(json, "tool_call_id", true);
    if (json.contains("tool_calls")) {
        if (!json["tool_calls"].is_array())
            throw std::invalid_argument("\"tool_calls\" must be an array");
        for (const auto& c : json["tool_calls"]) {
            if (!c.is_object()) throw std::invalid_argument("a tool call must be an object");
            m.tool_calls.push_back({string_field(c, "id", true), string_field(c, "name", true),
                                    string_field(c, "arguments", true)});
        }
    }
    return m;
}

Conversation conversation_from_json(const nlohmann::json& json) {
    if (!json.is_array()) throw std::invalid_argument("a conversation must be an array");
    Conversation out;
    for (const auto& m : json) out.push_back(message_from_json(m));
    return out;
}

}  // namespace caretz
