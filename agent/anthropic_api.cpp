#include "agent/anthropic_api.h"

#include "agent/model_error.h"

namespace caretz {

namespace {

using nlohmann::json;

// The content blocks a message becomes; empty text is left out, since the API refuses it.
json content_blocks(const Message& m) {
    json blocks = json::array();
    if (m.role == Message::Role::tool) {
        blocks.push_back(
            {{"type", "tool_result"}, {"tool_use_id", m.tool_call_id}, {"content", m.text}});
        return blocks;
    }
    if (!m.text.empty()) blocks.push_back({{"type", "text"}, {"text", m.text}});
    for (const auto& call : m.tool_calls) {
        blocks.push_back({{"type", "tool_use"},
                          {"id", call.id},
                          {"name", call.name},
                          {"input", arguments_object(call.arguments)}});
    }
    return blocks;
}

std::string string_at(const json& object, const char* key) {
    return object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : "";
}

// The content block an event is about; 0 when the server sent none, or no integer.
int index_of(const json& event) {
    return event.contains("index") && event["index"].is_number_integer() ? event["index"].get<int>()
                                                                         : 0;
}

}  // namespace

json anthropic_request(const std::string& model, const std::string& system,
                       const Conversation& conversation, const std::vector<ToolSpec>& tools,
                       int max_tokens) {
    json messages = json::array();
    for (const auto& m : conversation) {
        json blocks = content_blocks(m);
        if (blocks.empty()) continue;
        std::string role = m.role == Message::Role::assistant ? "assistant" : "user";
        if (!messages.empty() && messages.back()["role"] == role) {
            for (auto& b : blocks) messages.back()["content"].push_back(std::move(b));
        } else {
            messages.push_back({{"role", role}, {"content", std::move(blocks)}});
        }
    }
    json tool_list = json::array();
    for (const auto& t : tools) {
        tool_list.push_back(
            {{"name", t.name}, {"description", t.description}, {"input_schema", t.parameters}});
    }
    json request = {{"model", model},
                    {"max_tokens", max_tokens},
                    {"stream", true},
                    {"system", system},
                    {"messages", messages}};
    if (!tool_list.empty()) request["tools"] = std::move(tool_list);
    return request;
}

void AnthropicStream::feed(const SseEvent& event) {
    json e = json::parse(event.data, nullptr, false);
    if (e.is_discarded() || !e.is_object())
        throw ModelError("the model API sent a stream event that is not a JSON object: " +
                         event.data.substr(0, 200));
    std::string type = string_at(e, "type");
    if (type == "error") {
        const json& error = e.contains("error") && e["error"].is_object() ? e["error"] : e;
        throw ModelError("the model API reported: " + string_at(error, "message") + " (" +
                         string_at(error, "type") + ")");
    }
    if (type == "message_start" && e.contains("message") && e["message"].is_object() &&
        e["message"].contains("usage")) {
        take_usage(e["message"]["usage"]);
    } else if (type == "message_delta" && e.contains("usage")) {
        take_usage(e["usage"]);
    }
    if (type == "content_block_start") {
        start_block(e);
    } else if (type == "content_block_delta") {
        take_delta(e);
    } else if (type == "message_stop") {
        stopped_ = true;
    }
}

void AnthropicStream::start_block(const json& event) {
    if (!event.contains("content_block") || !event["content_block"].is_object()) return;
    const json& block = event["content_block"];
    int index = index_of(event);
    std::string type = string_at(block, "type");
    if (type == "tool_use") {
        ToolBlock& tool = tools_[index];
        tool.call.id = string_at(block, "id");
        tool.call.name = string_at(block, "name");
        if (block.contains("input") && block["input"].is_object() && !block["input"].empty())
            tool.input_at_start = block["input"].dump();
    } else if (type == "text") {
        std::string text = string_at(block, "text");
        text_ += text;
        if (on_text_ && !text.empty()) on_text_(text);
    }
}

void AnthropicStream::take_delta(const json& event) {
    if (!event.contains("delta") || !event["delta"].is_object()) return;
    const json& delta = event["delta"];
    std::string type = string_at(delta, "type");
    if (type == "text_delta") {
        std::string text = string_at(delta, "text");
        text_ += text;
        if (on_text_ && !text.empty()) on_text_(text);
    } else if (type == "input_json_delta") {
        auto it = tools_.find(index_of(event));
        if (it != tools_.end()) it->second.call.arguments += string_at(delta, "partial_json");
    }
}

// The prompt's tokens are the uncached ones plus those written to and read from the cache;
// message_delta repeats the counts so far.
void AnthropicStream::take_usage(const json& usage) {
    if (!usage.is_object()) return;
    auto count = [&usage](const char* key) {
        return usage.contains(key) && usage[key].is_number_integer() ? usage[key].get<long>() : 0;
    };
    long input = count("input_tokens") + count("cache_creation_input_tokens") +
                 count("cache_read_input_tokens");
    if (input > 0) usage_.input = input;
    if (long output = count("output_tokens"); output > 0) usage_.output = output;
}

AssistantReply AnthropicStream::reply() const {
    AssistantReply reply{text_, {}, usage_};
    for (const auto& [index, tool] : tools_) {
        ToolCall call = tool.call;
        if (call.arguments.empty())
            call.arguments = tool.input_at_start.empty() ? "{}" : tool.input_at_start;
        if (call.id.empty()) call.id = "toolu_" + std::to_string(index);
        reply.tool_calls.push_back(std::move(call));
    }
    return reply;
}

}  // namespace caretz
