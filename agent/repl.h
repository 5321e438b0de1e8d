#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "agent/model_settings.h"
#include "agent/sandbox_report.h"
#include "escalation/command_pipeline.h"
#include "escalation/notify_mode.h"
#include "sandbox/sandbox.h"

namespace caretz {

struct ReplConfig {
    SandboxSpec sandbox;
    SandboxReport sandbox_report;    // for /sandbox, as Caretz started
    bool fresh_per_command = false;  // --no-session
    bool plan_mode = false;          // --plan; /plan toggles it
    CommandPipeline::Options pipeline;
    std::optional<std::chrono::seconds> permission_timeout;  // for the offer on the terminal
    NoticeSettings notice;  // how a question on the terminal makes itself noticed
    ModelSettings model;
    std::string first_prompt;     // -p
    bool print = false;           // --print
    std::string transcript_path;  // the session's transcript file
};

// Caretz's session. On a terminal: a prompt with line editing and history, where text goes to
// the model (its answer streams live), `!COMMAND` runs a command in the sandbox, `/plan`,
// `/allowances`, `/sandbox`, `/jobs`, `/help` and `/quit` do what /help says, Ctrl-C stops the
// current turn and Ctrl-D leaves; `-p` gives the first prompt. With `--print`, or `-p` without a
// terminal: runs the one prompt to the end, prints the final answer on stdout and never asks.
// With stdin not a terminal and no prompt: reads lines and handles each as typed. Returns
// Caretz's exit status.
int run_repl(const ReplConfig& config);

}  // namespace caretz
