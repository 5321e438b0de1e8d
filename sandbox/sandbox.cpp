#include "sandbox/sandbox.h"

#include <signal.h>

#include "sandbox/fresh_sandbox.h"
#include "sandbox/sandbox_session.h"

namespace caretz {

int signal_for_key(char c) {
    return c == '\x03' ? SIGINT : c == '\x1c' ? SIGQUIT : 0;
}

std::unique_ptr<Sandbox> open_sandbox(const SandboxSpec& spec, bool fresh_per_command) {
    if (fresh_per_command) return std::make_unique<FreshSandbox>(spec);
    return std::make_unique<SandboxSession>(spec.policy, spec.env, spec.shell, spec.cwd, spec.size);
}

}  // namespace caretz
