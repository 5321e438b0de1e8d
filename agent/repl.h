#pragma once

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "agent/instructions.h"
#include "agent/model_settings.h"
#include "agent/sandbox_report.h"
#include "agent/transcript_replay.h"
#include "escalation/command_pipeline.h"
#include "escalation/notify_mode.h"
#include "sandbox/sandbox.h"

namespace caretz {

// The session's sandbox as the search for git repositories under its writable roots left it,
// with what /sandbox tells of it and what there is to say about it.
struct PreparedSandbox {
    SandboxSpec spec;
    SandboxReport report;            // for /sandbox, as Caretz started
    std::vector<std::string> notes;  // one line each
};

struct ReplConfig {
    // Made while the prompt is up: in a workspace of many folders the search takes a while,
    // and nothing runs in the sandbox before it is done (the first command waits for it).
    std::shared_future<PreparedSandbox> sandbox;
    std::string cwd;                 // the workspace, as in the sandbox's spec
    std::string shell;               // the user's shell, as in the sandbox's spec
    bool fresh_per_command = false;  // --no-session
    bool plan_mode = false;          // --plan; /plan toggles it
    CommandPipeline::Options pipeline;
    std::optional<std::chrono::seconds> permission_timeout;  // for the offer on the terminal
    NoticeSettings notice;  // how a question on the terminal makes itself noticed
    ModelSettings model;
    long context_window = 0;      // model.context_window; 0: not set
    Instructions instructions;    // the AGENTS.md files
    std::string first_prompt;     // -p
    bool print = false;           // --print
    std::string transcript_path;  // the session's transcript file
    // --continue, --resume: the conversation to go on with, from the transcript at
    // transcript_path, which this session goes on writing.
    std::optional<ReplayedConversation> resumed;
    std::string history_path;  // the prompt history kept across sessions
};

// Caretz's session. On a terminal: a prompt with line editing and history, where text goes to
// the model (its answer streams live), `!COMMAND` runs a command in the sandbox, `/plan`,
// `/allowances`, `/sandbox`, `/jobs`, `/compact`, `/clear`, `/status`, `/model`, `/help` and
// `/quit` do what /help says, Ctrl-C stops the
// current turn and Ctrl-D leaves; `-p` gives the first prompt. With `--print`, or `-p` without a
// terminal: runs the one prompt to the end, prints the final answer on stdout and never asks.
// With stdin not a terminal and no prompt: reads lines and handles each as typed. Returns
// Caretz's exit status.
int run_repl(const ReplConfig& config);

}  // namespace caretz
