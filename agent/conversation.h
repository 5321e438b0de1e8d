#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace caretz {

// A tool call as the model wrote it.
struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;  // JSON text, exactly as streamed; it may not be valid JSON

    bool operator==(const ToolCall&) const = default;
};

// The tokens one request took, as the API reported them; 0 where it reported nothing.
struct TokenUsage {
    long input = 0;   // the prompt: system, tools and conversation
    long output = 0;  // the answer
};

// What the model answered in one request: text, tool calls, or both.
struct AssistantReply {
    std::string text;
    std::vector<ToolCall> tool_calls;
    TokenUsage usage;
};

// One entry of a conversation, in a form both providers' APIs can be built from.
struct Message {
    enum class Role { user, assistant, tool };
    Role role = Role::user;
    std::string text;                  // the user's text, the model's text, or a tool's result
    std::vector<ToolCall> tool_calls;  // assistant messages only
    std::string tool_call_id;          // tool messages only: the call this result answers
};

using Conversation = std::vector<Message>;

// A tool offered to the model: its JSON Schema parameters.
struct ToolSpec {
    std::string name;
    std::string description;
    nlohmann::json parameters;
};

// The arguments as a JSON object: what the model wrote, or {} when that was not an object.
// Requests carry this form, because servers that render their own chat templates reject
// history with invalid arguments.
nlohmann::json arguments_object(const std::string& arguments);

// A message as the transcript keeps it: {"role", "text", "tool_calls": [{"id", "name",
// "arguments"}], "tool_call_id"}, the last two only where they apply.
nlohmann::json message_json(const Message& message);
nlohmann::json conversation_json(const Conversation& conversation);
// The message `json` describes; throws std::invalid_argument naming what is wrong.
Message message_from_json(const nlohmann::json& json);
Conversation conversation_from_json(const nlohmann::json& json);

}  // namespace caretz
