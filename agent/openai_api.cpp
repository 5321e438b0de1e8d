#include "agent/openai_api.h"

#include "agent/model_error.h"

namespace caretz {

namespace {

using nlohmann::json;

json openai_message(const Message& m) {
    switch (m.role) {
        case Message::Role::user:
            return {{"role", "user"}, {"content", m.text}};
        case Message::Role::tool:
            return {{"role", "tool"}, {"tool_call_id", m.tool_call_id}, {"content", m.text}};
        case Message::Role::assistant:
            break;
    }
    json out = {{"role", "assistant"}, {"content", m.text}};
    if (m.tool_calls.empty()) return out;
    if (m.text.empty()) out["content"] = nullptr;
    json calls = json::array();
    for (const auto& call : m.tool_calls) {
        calls.push_back(
            {{"id", call.id},
             {"type", "function"},
             {"function",
              {{"name", call.name}, {"arguments", arguments_object(call.arguments).dump()}}}});
    }
    out["tool_calls"] = std::move(calls);
    return out;
}

// The message of an error the server put in the stream: {"error": {...}} as OpenAI sends it,
// or {"object": "error", "message": ...} as vLLM does.
std::optional<std::string> stream_error(const json& chunk) {
    if (chunk.contains("error")) {
        const json& e = chunk["error"];
        if (e.is_object() && e.contains("message") && e["message"].is_string())
            return e["message"].get<std::string>();
        return e.is_string() ? e.get<std::string>() : e.dump();
    }
    // Compared as JSON: a server's "object" or "message" of another type must not throw.
    if (chunk.contains("object") && chunk["object"] == "error")
        return chunk.contains("message") && chunk["message"].is_string()
                   ? chunk["message"].get<std::string>()
                   : chunk.dump();
    return std::nullopt;
}

}  // namespace

json openai_request(const std::string& model, const std::string& system,
                    const Conversation& conversation, const std::vector<ToolSpec>& tools) {
    json messages = json::array({{{"role", "system"}, {"content", system}}});
    for (const auto& m : conversation) messages.push_back(openai_message(m));
    json tool_list = json::array();
    for (const auto& t : tools) {
        tool_list.push_back(
            {{"type", "function"},
             {"function",
              {{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
    }
    // The last chunk then reports the tokens the request took (OpenAI, vLLM, llama.cpp and
    // Ollama all honour it); an empty tool list is refused by OpenAI, so none is sent.
    json request = {{"model", model},
                    {"stream", true},
                    {"stream_options", {{"include_usage", true}}},
                    {"messages", messages}};
    if (!tool_list.empty()) request["tools"] = std::move(tool_list);
    return request;
}

void OpenAiStream::feed(const SseEvent& event) {
    if (event.data == "[DONE]") {
        done_ = true;
        return;
    }
    json chunk = json::parse(event.data, nullptr, false);
    if (chunk.is_discarded() || !chunk.is_object())
        throw ModelError("the model API sent a stream event that is not a JSON object: " +
                         event.data.substr(0, 200));
    if (auto error = stream_error(chunk)) throw ModelError("the model API reported: " + *error);
    if (chunk.contains("usage") && chunk["usage"].is_object()) take_usage(chunk["usage"]);
    if (!chunk.contains("choices") || !chunk["choices"].is_array() || chunk["choices"].empty())
        return;  // a usage or keep-alive chunk
    const json& choice = chunk["choices"][0];
    if (!choice.is_object()) return;
    if (choice.contains("delta") && choice["delta"].is_object()) {
        const json& delta = choice["delta"];
        if (delta.contains("content") && delta["content"].is_string()) {
            std::string piece = delta["content"].get<std::string>();
            text_ += piece;
            if (on_text_ && !piece.empty()) on_text_(piece);
        }
        if (delta.contains("tool_calls") && delta["tool_calls"].is_array()) {
            for (const auto& call : delta["tool_calls"]) take_tool_call_delta(call);
        }
    }
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) finished_ = true;
}

// Servers that send each call whole (some leave out "index") get one entry per new id.
void OpenAiStream::take_tool_call_delta(const json& delta) {
    if (!delta.is_object()) return;
    std::string id =
        delta.contains("id") && delta["id"].is_string() ? delta["id"].get<std::string>() : "";
    int index = delta.contains("index") && delta["index"].is_number_integer()
                    ? delta["index"].get<int>()
                    : -1;
    if (index < 0) {
        bool known = last_index_ >= 0 && (id.empty() || calls_[last_index_].id == id);
        index = known ? last_index_ : static_cast<int>(calls_.size());
    }
    last_index_ = index;
    ToolCall& call = calls_[index];
    if (!id.empty()) call.id = id;
    if (delta.contains("function") && delta["function"].is_object()) {
        const json& f = delta["function"];
        // Some servers repeat the name in every delta instead of sending it once.
        if (f.contains("name") && f["name"].is_string() && f["name"] != call.name)
            call.name += f["name"].get<std::string>();
        if (f.contains("arguments") && f["arguments"].is_string())
            call.arguments += f["arguments"].get<std::string>();
        else if (f.contains("arguments") && f["arguments"].is_object())
            call.arguments = f["arguments"].dump();
    }
}

void OpenAiStream::take_usage(const json& usage) {
    if (usage.contains("prompt_tokens") && usage["prompt_tokens"].is_number_integer())
        usage_.input = usage["prompt_tokens"].get<long>();
    if (usage.contains("completion_tokens") && usage["completion_tokens"].is_number_integer())
        usage_.output = usage["completion_tokens"].get<long>();
}

AssistantReply OpenAiStream::reply() const {
    AssistantReply reply{text_, {}, usage_};
    for (const auto& [index, call] : calls_) {
        ToolCall c = call;
        if (c.id.empty()) c.id = "call_" + std::to_string(index);
        reply.tool_calls.push_back(std::move(c));
    }
    return reply;
}

}  // namespace caretz
