#pragma once

#include "app/command_line.h"
#include "app/config.h"
#include "app/user_context.h"
#include "escalation/command_pipeline.h"

namespace caretz {

// The pipeline settings for this run: the offer's flag and timeout, a new session id, the
// user's shell for reruns, the audit log's path.
CommandPipeline::Options pipeline_options(const Settings& settings, const UserContext& user);

// `caretz exec COMMAND`: runs the command through the sandbox and exits with its status.
int run_exec(const CommandLine& cl, const Settings& settings);

}  // namespace caretz
