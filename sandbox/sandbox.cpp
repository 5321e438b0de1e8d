#include "sandbox/sandbox.h"

#include <signal.h>

#include <algorithm>

#include "sandbox/fresh_sandbox.h"
#include "sandbox/sandbox_session.h"

namespace caretz {

int signal_for_key(char c) {
    return c == '\x03' ? SIGINT : c == '\x1c' ? SIGQUIT : 0;
}

void InterruptRepeat::start() {
    pending_ = true;
    due_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
}

int InterruptRepeat::ms_until_due() const {
    if (!pending_) return -1;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        due_ - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, left.count()));
}

bool InterruptRepeat::take_due() {
    if (!pending_ || std::chrono::steady_clock::now() < due_) return false;
    due_ += std::chrono::seconds(1);
    return true;
}

std::unique_ptr<Sandbox> open_sandbox(const SandboxSpec& spec, bool fresh_per_command) {
    if (fresh_per_command) return std::make_unique<FreshSandbox>(spec);
    return std::make_unique<SandboxSession>(spec);
}

}  // namespace caretz
