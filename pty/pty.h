#pragma once

#include <optional>
#include <string>

#include "pty/unique_fd.h"

namespace caretz {

struct WindowSize {
    unsigned short rows = 24;
    unsigned short cols = 80;
};

// A pseudo-terminal pair. Caretz keeps the master; the slave becomes a child's terminal. Both
// ends are close-on-exec, so only the child that is handed the slave explicitly gets it.
class Pty {
public:
    // Opens a new pair with the given window size; throws std::system_error when the system
    // has no pseudo-terminal to give. With `exact_output` the terminal passes what programs
    // write through unchanged (no '\r' added before '\n'), for output that goes to a pipe or
    // a file rather than to a screen.
    static Pty open(WindowSize size, bool exact_output = false);
    // A pair another process opened and passed on (Caretz on the host, for the session
    // supervisor in the sandbox, where the slave has no name: slave_path() is empty).
    static Pty adopt(UniqueFd master, UniqueFd slave);

    int master() const { return master_.get(); }
    int slave() const { return slave_.get(); }
    const std::string& slave_path() const { return slave_path_; }

    // The parent closes its copy of the slave once the child has it, so that reading the
    // master reports EOF/EIO when the child's side is gone.
    void close_slave() { slave_.reset(); }

    // For a command nobody types into: when a program on the slave side reads whole lines
    // (canonical mode) and no input waits there, gives it the end of input, as Ctrl-D on an
    // empty line does. At most one such end waits at a time. It is taken in as an end of input
    // before this returns, so a reader that switches to raw mode later never sees a Ctrl-D
    // (as long as nothing else switches the mode meanwhile: see UnattendedCommand). Never
    // throws.
    void offer_end_of_input() noexcept;
    // Drops input that waits on the slave side unread. Never throws.
    void drop_pending_input() noexcept;

private:
    Pty(UniqueFd master, UniqueFd slave, std::string slave_path);
    // A new descriptor of the slave, non-blocking; invalid when there is none.
    UniqueFd open_slave() const noexcept;

    UniqueFd master_;
    UniqueFd slave_;
    std::string slave_path_;
};

// Sets the window size of the terminal behind `fd` (either end of a PTY); the kernel sends
// SIGWINCH to the terminal's foreground process group. Throws std::system_error on failure.
void set_window_size(int fd, WindowSize size);

// The window size of the terminal behind `fd`. Throws std::system_error on failure.
WindowSize window_size(int fd);

// The window size of the terminal behind `fd`, or nullopt when `fd` is no terminal.
std::optional<WindowSize> terminal_size(int fd) noexcept;

// For a descriptor whose read just returned 0: true when it is a terminal that hung up (the
// ssh connection or the terminal window is gone), false for the end of a pipe or file.
bool terminal_hung_up(int fd) noexcept;

// What Caretz does when its terminal hangs up while a command runs: what the kernel does
// when the terminal's controlling process exits, a SIGHUP, whose handler restores what it
// can and ends Caretz; the sandbox dies with it. Under a session leader that does not pass
// the hangup on (su, runuser), no SIGHUP would come, and the command would run on unseen.
void hang_up_on_lost_terminal(int fd) noexcept;

// For a freshly forked child, before exec: puts signal dispositions and the mask back to
// defaults, as an ignored SIGPIPE or a blocked SIGINT would otherwise be inherited by the
// command. Async-signal-safe.
void reset_signals_for_exec() noexcept;

// Whether `c` ends a line of typed input as the terminal's line discipline sees it: '\n', or
// '\r', which it turns into one.
inline bool ends_line(char c) {
    return c == '\n' || c == '\r';
}

// Drops input that waits unread on the terminal behind `fd`; false when it is no terminal.
bool drop_pending_input(int fd) noexcept;
// The same, saying how many whole lines it dropped (each '\n' or '\r' ends one, as for the
// terminal's line discipline); nullopt when `fd` is no terminal.
std::optional<int> drop_pending_lines(int fd) noexcept;
// drop_pending_lines() for the process's controlling terminal (/dev/tty); nullopt without one.
std::optional<int> drop_controlling_terminal_input() noexcept;

// For a freshly forked child, before exec: starts a new session, makes `slave_fd` its
// controlling terminal and its stdin, stdout and stderr, and closes the original descriptor.
// Uses only async-signal-safe calls, so it is safe between fork and exec in a threaded
// program. Returns false with errno set on failure; the child should then _exit.
bool attach_controlling_terminal(int slave_fd) noexcept;

}  // namespace caretz
