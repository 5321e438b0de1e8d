#pragma once

#include <string>

#include "agent/agent_services.h"
#include "agent/conversation.h"
#include "agent/tool_runner.h"
#include "agent/turn_interrupt.h"
#include "agent/turn_view.h"

namespace caretz {

// How a turn ended.
struct TurnOutcome {
    std::string answer;        // the model's last text
    std::string error;         // one line; empty when the model answered
    bool interrupted = false;  // the user pressed Ctrl-C

    bool ok() const { return error.empty() && !interrupted; }
};

// One conversation with the model: the main agent's, or a subagent's. A turn sends the
// conversation, runs the tool calls of the reply, and goes on until the model answers
// without calling a tool.
class Agent {
public:
    enum class Kind { main, subagent };

    Agent(AgentServices& services, TurnView view, Kind kind, std::string name);

    TurnOutcome run_turn(const std::string& prompt, bool plan_mode, TurnInterrupt& interrupt);

    const Conversation& conversation() const { return conversation_; }
    // Starts from a conversation rebuilt elsewhere (a resumed transcript); nothing is recorded.
    void restore(Conversation conversation) { conversation_ = std::move(conversation); }

    // /clear: a new, empty conversation (the sandbox session goes on).
    void clear();
    // /compact: summarizes the older part of the conversation now, keeping `also_keep`
    // especially. The outcome's error says why nothing changed.
    TurnOutcome compact(const std::string& also_keep, TurnInterrupt& interrupt);

    // The size of the conversation as the model saw it last: the prompt tokens the API
    // reported for the latest request, or Caretz's estimate (`estimated`) before one.
    struct ContextSize {
        long tokens = 0;
        bool estimated = true;
    };
    ContextSize context_size() const;

private:
    // Adds a result for every call of the reply, running them in order until one is
    // interrupted; true when the turn must stop.
    bool run_tool_calls(const std::vector<ToolCall>& calls, bool plan_mode,
                        TurnInterrupt& interrupt);
    ToolOutcome run_subagent(const std::string& prompt, bool plan_mode, TurnInterrupt& interrupt);
    void keep_reply(const AssistantReply& reply, bool interrupted);
    TurnOutcome failed(const std::string& error);
    void record(nlohmann::json entry);

    // One request for the next reply, compacting the conversation first when it would not fit
    // and once more, then sending again, when the server says that it did not.
    ModelResult ask_model(const std::string& system, const std::vector<ToolSpec>& tools,
                          TurnInterrupt& interrupt);
    // What set compaction off, for the line that tells it: the window filling, the server's
    // refusal of a request, or /compact.
    enum class Compaction { filling, refused, by_hand };
    // Makes the conversation fit: old command outputs first, then a summary of the older
    // part; by hand (/compact) it always summarizes. One line says what was done. False when
    // interrupted; `why_not` says why nothing could be compacted.
    bool compact_conversation(size_t fixed, Compaction why, const std::string& also_keep,
                              TurnInterrupt& interrupt, std::string* why_not = nullptr);
    // Asks the model for the summary of `older`; nullopt when it could not give one.
    std::optional<std::string> summary_of(const Conversation& older, const std::string& also_keep,
                                          TurnInterrupt& interrupt, bool& interrupted);
    void count_usage(const TokenUsage& usage);
    // What the system prompt and the tools add to each request outside plan mode, in bytes.
    size_t fixed_bytes() const;

    AgentServices& services_;
    TurnView view_;
    Kind kind_;
    std::string name_;
    Conversation conversation_;
    long context_tokens_ = 0;  // the latest request's prompt tokens as the API reported them
};

}  // namespace caretz
