#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "escalation/notify_mode.h"
#include "pty/terminal.h"
#include "sandbox/environment.h"

namespace caretz {

// How the notification escapes reach the terminal the user looks at.
enum class NoticeRoute {
    direct,           // Caretz's terminal is the user's
    tmux,             // inside tmux, which flags the window on the bell and drops OSC 9 and 777
    tmux_passthrough  // inside tmux with allow-passthrough on: the escapes go through to the
                      // outer terminal in tmux's DCS passthrough form
};

// The bytes that announce a question: the window title pushed on the terminal's title stack
// and set to say that Caretz waits, the bell, and in desktop mode the notification escapes
// carrying `summary` (escaped text on one line, see question_summary). Empty when off.
std::string notice_start(NotifyMode mode, std::string_view summary, NoticeRoute route);
// The bytes that end it: the user's own title popped back. Empty when off.
std::string notice_end(NotifyMode mode);

// `text` as one line for a notification: every control character, escape sequence and
// invisible character shown escaped (shown_escaped), cut at a character boundary to at most
// about 200 bytes, so nothing a command printed can act as an escape in a notification.
std::string question_summary(std::string_view text);

// Where the notification escapes go for a Caretz with this environment: $TMUX set means tmux,
// and then tmux itself is asked (for at most a second) whether $TMUX_PANE allows passthrough.
NoticeRoute notice_route(const Environment& env);

// Runs `command` with `summary` appended and in $CARETZ_QUESTION, on the host, in a session of
// its own with no controlling terminal and /dev/null for stdin, stdout and stderr, so it can
// neither read nor type into the terminal nor draw over the question, and Caretz never waits
// for it. Caretz's API keys are not in its environment.
void start_notify_command(const std::vector<std::string>& command, const std::string& summary);

// While it lives, the terminal says that a question waits (notice_start, then notice_end, which
// the terminal also writes should Caretz be killed meanwhile), and the notify command has been
// started. Only ever made with a terminal.
class QuestionNotice {
public:
    QuestionNotice(Terminal& terminal, const NoticeSettings& settings, const std::string& summary);
    ~QuestionNotice();
    QuestionNotice(const QuestionNotice&) = delete;
    QuestionNotice& operator=(const QuestionNotice&) = delete;

private:
    Terminal& terminal_;
    NotifyMode mode_;
};

}  // namespace caretz
