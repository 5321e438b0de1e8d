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

private:
    // Adds a result for every call of the reply, running them in order until one is
    // interrupted; true when the turn must stop.
    bool run_tool_calls(const std::vector<ToolCall>& calls, bool plan_mode,
                        TurnInterrupt& interrupt);
    ToolOutcome run_subagent(const std::string& prompt, bool plan_mode, TurnInterrupt& interrupt);
    void keep_reply(const AssistantReply& reply, bool interrupted);
    TurnOutcome failed(const std::string& error);
    void record(nlohmann::json entry);

    AgentServices& services_;
    TurnView view_;
    Kind kind_;
    std::string name_;
    Conversation conversation_;
};

}  // namespace caretz
