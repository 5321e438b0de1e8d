#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "pty/terminal_modes.h"
#include "sandbox/environment.h"

namespace caretz {

struct RerunCommand {
    std::string shell;    // the user's shell: runs `shell -c command`
    std::string command;
    std::string cwd;      // where the sandboxed attempt ended
    Environment env;      // the user's, plus the sandbox overlay, minus Caretz's API keys
};

// Runs an approved command outside the sandbox on the user's terminal. Caretz steps aside:
// the terminal gets its own modes back, the command leads its own process group as the
// terminal's foreground (so Ctrl-C reaches only it, and sudo asks for the password on the
// terminal as usual), and Caretz reads nothing from the terminal until it ends. Its output goes
// through a capture PTY that Caretz copies to the screen and into `on_output`. Afterwards
// Caretz takes the terminal back in raw mode. `tty_fd` is the terminal. Returns the status.
int rerun_on_terminal(const RerunCommand& cmd, int tty_fd, TerminalModes& modes,
                      const std::function<void(std::string_view)>& on_output);

}  // namespace caretz
