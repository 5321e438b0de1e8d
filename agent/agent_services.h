#pragma once

#include <functional>
#include <optional>

#include "agent/command_runner.h"
#include "agent/context_budget.h"
#include "agent/model_client.h"
#include "agent/system_prompt.h"
#include "agent/transcript.h"
#include "pty/terminal.h"

namespace caretz {

// The tokens a session's requests took, as the API reported them (summaries included).
struct SessionUsage {
    long input = 0;
    long output = 0;
    int requests = 0;
    int compactions = 0;
};

// What the agents of one Caretz session share: the model, the sandboxes, the transcript, the
// model's context budget, and the terminal (for Ctrl-C and window sizes) when there is one.
struct AgentServices {
    ModelClient& model;
    CommandRunner& commands;
    Transcript& transcript;
    PromptFacts facts;  // plan_mode and subagent are set per request
    // The terminal (for Ctrl-C and window sizes; for ACP, the pipe its cancel arrives on);
    // nullptr without one.
    Terminal* terminal = nullptr;
    int subagents_started = 0;  // numbers subagents for the screen and the transcript
    ContextBudget budget;       // from model.context_window and the model
    SessionUsage usage;
};

}  // namespace caretz
