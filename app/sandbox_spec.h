#pragma once

#include "app/command_line.h"
#include "app/config.h"
#include "app/user_context.h"
#include "sandbox/sandbox.h"

namespace caretz {

// The sandbox this run of Caretz gives its commands: the policy for the workspace after
// config, profile and flags, the user's environment without API keys, the user's shell.
SandboxSpec sandbox_spec_for(const CommandLine& cl, const Settings& settings,
                             const UserContext& user);

}  // namespace caretz
