#pragma once

#include <string>
#include <vector>

#include "sandbox/sandbox.h"

namespace caretz {

// The full bwrap argv (starting with the bwrap path) that runs `command` under `policy`.
std::vector<std::string> sandbox_argv(const SandboxPolicy& policy, const std::string& cwd,
                                      const std::vector<std::string>& command);

// Per-command mode (`--no-session`): every command gets a sandbox of its own, started with
// `$SHELL -c COMMAND` in the workspace. stdout and stderr are merged into one pipe.
class FreshSandbox : public Sandbox {
public:
    explicit FreshSandbox(SandboxSpec spec) : spec_(std::move(spec)) {}
    SandboxResult run(const std::string& command, const CommandIo& io) override;
    std::string cwd() const override { return spec_.cwd; }

private:
    SandboxSpec spec_;
};

}  // namespace caretz
