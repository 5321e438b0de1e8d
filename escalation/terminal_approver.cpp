#include "escalation/terminal_approver.h"

#include "escalation/offer.h"

namespace caretz {

TerminalApprover::TerminalApprover(Terminal& terminal, std::optional<std::chrono::seconds> timeout,
                                   NoticeSettings notice)
    : terminal_(terminal), timeout_(timeout), notice_(std::move(notice)) {}

Decision TerminalApprover::ask(const std::string& text, const std::string& summary) {
    QuestionNotice notice(terminal_, notice_, summary);
    return ask_on_terminal(terminal_, text, timeout_);
}

Decision TerminalApprover::ask_sandbox_off(const SandboxOffOffer& offer) {
    // The kinds are Caretz's own words; the command is escaped like everything else in it.
    std::string refused;
    for (const auto& r : offer.refusals)
        refused += (refused.empty() ? "" : ", ") + std::string(to_string(r.kind));
    return ask(offer_text(offer), question_summary("run outside the sandbox? (refused: " + refused +
                                                   ") " + offer.command));
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
    return ask(text, question_summary("allow a sandboxed command to reach " + request.host + ":" +
                                      std::to_string(request.port) + "?"));
}

int TerminalApprover::rerun(const RerunCommand& command,
                            const std::function<void(std::string_view)>& on_output) {
    return rerun_on_terminal(command, terminal_, on_output);
}

}  // namespace caretz
