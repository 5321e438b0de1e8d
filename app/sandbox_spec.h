#pragma once

#include "agent/sandbox_report.h"
#include "app/command_line.h"
#include "app/config.h"
#include "app/user_context.h"
#include "sandbox/sandbox.h"

namespace caretz {

// The sandbox this run of Caretz gives its commands: the policy for the workspace after
// config, profile and flags, the user's environment without API keys, the user's shell. What
// there is to say about it (the search for repositories, a workspace config that is not read)
// goes to stderr.
SandboxSpec sandbox_spec_for(const CommandLine& cl, const Settings& settings,
                             const UserContext& user);
// The same, with what there is to say added to `notes`, one line each, for a caller that says
// it when it can (the REPL's prompt may be up meanwhile).
SandboxSpec sandbox_spec_for(const CommandLine& cl, const Settings& settings,
                             const UserContext& user, std::vector<std::string>& notes);

// The store of the private cache layer for the user's workspace (sandbox/cache_layer.h).
std::string workspace_cache_store(const UserContext& user);

// The policy for the workspace after config, profile and flags, with the repositories found
// in its writable roots protected; reads the host and changes nothing on it.
SandboxPolicy effective_policy(const CommandLine& cl, const Settings& settings,
                               const UserContext& user);

// What `/sandbox` and `caretz sandbox show` tell: `policy` (from effective_policy) with each
// value's source, from the merged settings' sources and the flags.
SandboxReport sandbox_report_for(const CommandLine& cl, const Settings& settings,
                                 const UserContext& user, const SandboxPolicy& policy);

}  // namespace caretz
