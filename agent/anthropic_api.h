#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/conversation.h"
#include "agent/stream_assembler.h"

namespace caretz {

// The body of a streamed Anthropic Messages API request. Tool results travel in user messages
// and consecutive entries of one role are merged, as the API requires.
nlohmann::json anthropic_request(const std::string& model, const std::string& system,
                                 const Conversation& conversation,
                                 const std::vector<ToolSpec>& tools, int max_tokens);

// Assembles a Messages API stream: content blocks (text, tool_use with input_json_delta
// pieces) keyed by index, until message_stop.
class AnthropicStream : public StreamAssembler {
public:
    explicit AnthropicStream(TextSink on_text) : on_text_(std::move(on_text)) {}

    void feed(const SseEvent& event) override;
    bool complete() const override { return stopped_; }
    AssistantReply reply() const override;

private:
    struct ToolBlock {
        ToolCall call;
        std::string input_at_start;  // the input content_block_start gave, used without deltas
    };

    void start_block(const nlohmann::json& event);
    void take_delta(const nlohmann::json& event);
    void take_usage(const nlohmann::json& usage);

    TextSink on_text_;
    std::string text_;
    std::map<int, ToolBlock> tools_;  // by content block index
    bool stopped_ = false;
    TokenUsage usage_;
};

}  // namespace caretz
