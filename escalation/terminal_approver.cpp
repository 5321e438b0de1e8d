#include "escalation/terminal_approver.h"

#include <unistd.h>

#include "escalation/offer.h"

namespace caretz {

TerminalApprover::TerminalApprover(int fd, TerminalModes& modes,
                                   std::optional<std::chrono::seconds> timeout)
    : fd_(fd), modes_(modes), timeout_(timeout) {}

Decision TerminalApprover::ask_sandbox_off(const SandboxOffOffer& offer) {
    return ask_on_terminal(fd_, STDOUT_FILENO, offer_text(offer.command, offer.cwd, offer.refusals),
                           timeout_);
}

Decision TerminalApprover::ask_network(const NetworkRequest&) {
    // The terminal belongs to the running command until the network approval learns to
    // pause its pump; until then a blocked destination stays blocked.
    return Decision::deny;
}

int TerminalApprover::rerun(const RerunCommand& command,
                            const std::function<void(std::string_view)>& on_output) {
    return rerun_on_terminal(command, fd_, modes_, on_output);
}

}  // namespace caretz
