#pragma once

#include <string>

#include "escalation/command_pipeline.h"
#include "sandbox/sandbox.h"

namespace caretz {

struct ReplConfig {
    SandboxSpec sandbox;
    bool fresh_per_command = false;  // --no-session
    bool plan_mode = false;
    CommandPipeline::Options pipeline;
};

// The interactive loop: `!COMMAND` runs in the sandbox with its output live on the terminal.
// On a terminal it has a prompt with line editing and history; with stdin not a terminal it
// reads lines and runs the `!` ones without prompts. Returns Caretz's exit status.
int run_repl(const ReplConfig& config);

}  // namespace caretz
