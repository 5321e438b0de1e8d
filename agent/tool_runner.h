#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/agent_services.h"
#include "agent/conversation.h"
#include "agent/turn_interrupt.h"
#include "agent/turn_view.h"
#include "escalation/command_pipeline.h"

namespace caretz {

// A tool call's result: what the model reads, and what the transcript keeps about it.
struct ToolOutcome {
    std::string content;
    nlohmann::json record = nlohmann::json::object();  // ran, exit_code, decision, job_id, ...
    bool interrupted = false;                          // the user pressed Ctrl-C meanwhile
};

// Carries out the model's tool calls: shell commands through the pipeline (or as background
// jobs), job requests, and subagents through `run_subagent`.
class ToolRunner {
public:
    using Subagent = std::function<ToolOutcome(const std::string& prompt)>;

    // `source` is model for the main agent and subagent for subagents; `run_subagent` is
    // empty where `task` is not offered.
    ToolRunner(AgentServices& services, TurnView& view, CommandSource source, Subagent run_subagent)
        : services_(services),
          view_(view),
          source_(source),
          run_subagent_(std::move(run_subagent)) {}

    ToolOutcome run(const ToolCall& call, bool plan_mode, TurnInterrupt& interrupt);

private:
    ToolOutcome run_shell(const std::string& command, bool plan_mode, TurnInterrupt& interrupt);
    ToolOutcome start_job(const std::string& command, bool plan_mode);
    ToolOutcome job_output(int id);
    ToolOutcome job_kill(int id);

    AgentServices& services_;
    TurnView& view_;
    CommandSource source_;
    Subagent run_subagent_;
};

}  // namespace caretz
