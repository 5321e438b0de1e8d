#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/environment.h"
#include "sandbox/policy.h"

namespace caretz {

// The sandbox itself could not be set up; the command did not run.
class SandboxStartError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The full bwrap argv (starting with the bwrap path) that runs `command` under `policy`.
std::vector<std::string> sandbox_argv(const SandboxPolicy& policy, const std::string& cwd,
                                      const std::vector<std::string>& command);

// Runs `command` in a fresh sandbox (per-command mode). stdin is inherited; stdout and stderr
// are merged and handed to `on_output` as they arrive. Returns the exit status (128+N for a
// signal). Throws SandboxStartError when bwrap could not start the sandbox.
int run_in_fresh_sandbox(const SandboxPolicy& policy, const std::string& cwd,
                         const std::vector<std::string>& command, const Environment& env,
                         const std::function<void(std::string_view)>& on_output);

}  // namespace caretz
