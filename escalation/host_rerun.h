#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "pty/terminal.h"
#include "sandbox/environment.h"

namespace caretz {

struct RerunCommand {
    std::string shell;  // the user's shell: runs `shell -c command`
    std::string command;
    std::string cwd;  // where the sandboxed attempt ended
    Environment env;  // the user's, plus the sandbox overlay, minus Caretz's API keys
};

// Runs an approved command outside the sandbox on the user's terminal. Caretz steps aside:
// the terminal gets its own modes back, the command leads its own process group as the
// terminal's foreground (so Ctrl-C reaches only it, and sudo asks for the password on the
// terminal as usual), and Caretz reads nothing from the terminal until it ends. Its output goes
// through a capture PTY that Caretz copies to the screen and into `on_output`. Afterwards
// Caretz takes the terminal back in raw mode. Returns the status.
int rerun_on_terminal(const RerunCommand& cmd, Terminal& terminal,
                      const std::function<void(std::string_view)>& on_output);

// Runs an approved command outside the sandbox where there is no terminal to hand it (an ACP
// client approved it): in a session of its own with no controlling terminal, stdin from
// /dev/null, stdout and stderr through a pipe into `on_output`. Nothing can ask the user for
// input, so sudo fails the way it does without a terminal, and that is the result. Once
// `stop_fd` (-1: none) turns readable, the command's process group gets SIGTERM; nothing is read
// from it. Returns the status.
int rerun_without_terminal(const RerunCommand& cmd,
                           const std::function<void(std::string_view)>& on_output, int stop_fd);

}  // namespace caretz
