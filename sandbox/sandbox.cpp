#include "sandbox/sandbox.h"

#include "sandbox/fresh_sandbox.h"
#include "sandbox/sandbox_session.h"

namespace caretz {

std::unique_ptr<Sandbox> open_sandbox(const SandboxSpec& spec, bool fresh_per_command) {
    if (fresh_per_command) return std::make_unique<FreshSandbox>(spec);
    return std::make_unique<SandboxSession>(spec.policy, spec.env, spec.shell, spec.cwd, spec.size);
}

}  // namespace caretz
