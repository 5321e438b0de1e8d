#include "escalation/terminal_approver.h"

#include "escalation/offer.h"

namespace caretz {

TerminalApprover::TerminalApprover(Terminal& terminal, std::optional<std::chrono::seconds> timeout)
    : terminal_(terminal), timeout_(timeout) {}

Decision TerminalApprover::ask_sandbox_off(const SandboxOffOffer& offer) {
    return ask_on_terminal(terminal_, offer_text(offer.command, offer.cwd, offer.refusals),
                           timeout_);
}

// The running command's pump stands still while this is asked (the proxy holds it at its
// gate), so the answer cannot reach the command and its output cannot cover the question.
Decision TerminalApprover::ask_network(const NetworkRequest& request) {
    const std::string destination =
        shown_escaped(request.host) + ":" + std::to_string(request.port);
    std::string text = "\n\x1b[1mA sandboxed command wants to reach " + destination + "\x1b[0m\n";
    text +=
        "The network policy does not allow it (sandbox.allowed_domains). The connection waits.\n";
    text += "Allow " + destination + "?\n";
    text += "  [o] Allow once   [s] Allow for session   [d] Deny (default: Enter, Esc)\n";
    return ask_on_terminal(terminal_, text, timeout_);
}

int TerminalApprover::rerun(const RerunCommand& command,
                            const std::function<void(std::string_view)>& on_output) {
    return rerun_on_terminal(command, terminal_, on_output);
}

}  // namespace caretz
