#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/conversation.h"
#include "agent/stream_assembler.h"

namespace caretz {

// The body of a streamed OpenAI-compatible chat completions request (also what Ollama,
// llama.cpp's server and vLLM accept).
nlohmann::json openai_request(const std::string& model, const std::string& system,
                              const Conversation& conversation, const std::vector<ToolSpec>& tools);

// Assembles a chat completions stream: `choices[0].delta` content and tool call deltas, whose
// arguments arrive in pieces keyed by the call's index, until a finish_reason or [DONE]; and
// the usage chunk that stream_options.include_usage asks for.
class OpenAiStream : public StreamAssembler {
public:
    explicit OpenAiStream(TextSink on_text) : on_text_(std::move(on_text)) {}

    void feed(const SseEvent& event) override;
    bool complete() const override { return done_ || finished_; }
    AssistantReply reply() const override;

private:
    void take_tool_call_delta(const nlohmann::json& delta);
    void take_usage(const nlohmann::json& usage);

    TextSink on_text_;
    std::string text_;
    std::map<int, ToolCall> calls_;  // by the index the stream gives each call
    int last_index_ = -1;
    TokenUsage usage_;
    bool done_ = false;
    bool finished_ = false;
};

}  // namespace caretz
