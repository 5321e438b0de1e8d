#pragma once

#include <string>
#include <vector>

#include "agent/conversation.h"

namespace caretz {

// The tools offered to the model: `shell` (required string `command`, optional boolean
// `background`), `job_output` and `job_kill` (integer `job_id`), and for the main agent
// `task` (string `prompt`), which starts a subagent. No tool and no parameter asks for a run
// outside the sandbox: only the user can decide that.
std::vector<ToolSpec> agent_tools(bool with_task);

// A tool call's arguments, checked.
struct ParsedToolCall {
    std::string error;        // non-empty: the call cannot run, and this says why
    std::string command;      // shell
    bool background = false;  // shell
    int job_id = 0;           // job_output, job_kill
    std::string prompt;       // task
};

// Checks `call` against the tools (`with_task`: whether `task` is one of them).
ParsedToolCall parse_tool_call(const ToolCall& call, bool with_task);

}  // namespace caretz
