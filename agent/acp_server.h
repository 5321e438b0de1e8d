#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "agent/instructions.h"
#include "agent/model_settings.h"
#include "escalation/command_pipeline.h"
#include "sandbox/sandbox.h"

namespace caretz {

// What every ACP session shares; each session gets its own sandbox, model client and agent.
struct AcpConfig {
    // The sandbox for a session whose workspace is `cwd` (the client's project folder).
    std::function<SandboxSpec(const std::string& cwd)> sandbox_for;
    // The pipeline settings for a new session, with a session id of its own.
    std::function<CommandPipeline::Options()> new_pipeline_options;
    bool fresh_per_command = false;  // --no-session
    bool plan_mode = false;          // --plan
    std::optional<std::chrono::seconds> permission_timeout;
    ModelSettings model;
    long context_window = 0;   // model.context_window; 0: not set
    std::string sessions_dir;  // where the transcripts go
    // The AGENTS.md files for a session whose workspace is `cwd`.
    std::function<Instructions(const std::string& cwd)> instructions_for;
};

// Serves the Agent Client Protocol (JSON-RPC 2.0, one message per line) on `in_fd` and
// `out_fd` until the input ends: initialize, session/new, session/prompt and session/cancel,
// with session/update notifications and session/request_permission for offers. The input is
// read all the time on the calling thread, each prompt runs on a thread of its own. Returns
// Caretz's exit status.
int run_acp_server(const AcpConfig& config, int in_fd, int out_fd);

// run_acp_server on stdin and stdout. Nothing else may ever reach stdout, so descriptor 1
// becomes stderr (and 0 /dev/null) for the rest of Caretz and what it starts.
int serve_acp_on_stdio(const AcpConfig& config);

}  // namespace caretz
