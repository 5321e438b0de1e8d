#pragma once

#include <functional>
#include <optional>

#include "agent/command_runner.h"
#include "agent/model_client.h"
#include "agent/system_prompt.h"
#include "agent/transcript.h"
#include "pty/terminal.h"

namespace caretz {

// What the agents of one Caretz session share: the model, the sandboxes, the transcript, and
// the terminal (for Ctrl-C and window sizes) when there is one.
struct AgentServices {
    const ModelClient& model;
    CommandRunner& commands;
    Transcript& transcript;
    PromptFacts facts;  // plan_mode and subagent are set per request
    // The terminal (for Ctrl-C and window sizes; for ACP, the pipe its cancel arrives on);
    // nullptr without one.
    Terminal* terminal = nullptr;
    int subagents_started = 0;  // numbers subagents for the screen and the transcript
};

}  // namespace caretz
