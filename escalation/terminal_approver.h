#pragma once

#include <chrono>
#include <optional>

#include "escalation/approver.h"
#include "escalation/question_notice.h"
#include "pty/terminal.h"

namespace caretz {

// The user at Caretz's own terminal: offers are shown on it and answered with a key, and an
// approved rerun gets the terminal (see rerun_on_terminal). While a question waits, the terminal
// says so as `notice` sets (QuestionNotice).
class TerminalApprover : public Approver {
public:
    TerminalApprover(Terminal& terminal, std::optional<std::chrono::seconds> timeout,
                     NoticeSettings notice);

    Decision ask_sandbox_off(const SandboxOffOffer& offer) override;
    Decision ask_network(const NetworkRequest& request) override;
    int rerun(const RerunCommand& command,
              const std::function<void(std::string_view)>& on_output) override;

private:
    // Asks with `text` on the screen and `summary` in the notice.
    Decision ask(const std::string& text, const std::string& summary);

    Terminal& terminal_;
    std::optional<std::chrono::seconds> timeout_;
    NoticeSettings notice_;
};

}  // namespace caretz
