#pragma once

#include <termios.h>

#include <atomic>
#include <cstddef>
#include <string_view>

namespace caretz {

// The one owner of the real terminal's modes. It saves the modes when constructed and puts
// them back when destroyed, and, once install_exit_handlers() has been called, also on
// std::exit and when the process dies from a signal, so the user's terminal is never left in
// raw mode with a hidden cursor.
class TerminalModes {
public:
    // `fd` is a read-write descriptor of the terminal (e.g. /dev/tty opened O_RDWR); the
    // restore path writes escape sequences to it. Throws std::system_error if it is not a
    // terminal.
    explicit TerminalModes(int fd);
    ~TerminalModes();
    TerminalModes(const TerminalModes&) = delete;
    TerminalModes& operator=(const TerminalModes&) = delete;

    // Raw input: bytes arrive one at a time, unechoed, and Ctrl-C/Ctrl-Z/Ctrl-\ are plain
    // bytes instead of signals. Output processing stays as saved, so '\n' still starts a new
    // line for Caretz's own text. Throws std::system_error on failure.
    void enter_raw();

    // Puts the saved modes back. After raw mode it also shows the cursor and leaves bracketed
    // paste, which Caretz may have changed while it drew on the terminal. Never throws.
    void restore() noexcept;

    // In raw mode, output processing (OPOST: '\n' made "\r\n", and the rest of the saved
    // output flags) on or off. Off while a command's output, which its own terminal has
    // processed already, is copied here byte for byte. enter_raw() and restore() turn it back
    // on. False when the terminal refused.
    bool set_output_processing(bool on) noexcept;
    // Whether the terminal now turns '\n' into "\r\n" (OPOST and ONLCR).
    bool adds_carriage_return() const {
        return output_processing_ && (saved_.c_oflag & OPOST) && (saved_.c_oflag & ONLCR);
    }

    bool raw() const { return raw_; }
    const termios& saved() const { return saved_; }

    // Makes the saved modes come back on every exit path: std::exit (atexit), SIGTERM, SIGHUP,
    // SIGINT, SIGQUIT, and the crash signals SIGSEGV, SIGBUS, SIGABRT (also reached by an
    // uncaught exception), SIGFPE and SIGILL. The handlers restore the modes with
    // async-signal-safe calls, then die from the same signal with its default action, so the
    // exit status still tells what happened. Only one TerminalModes at a time may install
    // them: a second throws std::logic_error. Destruction puts the previous handlers back.
    void install_exit_handlers();

    // Bytes that undo a change Caretz makes to the terminal for a while (the window title it
    // pushes while a question waits), written after the modes come back should the process die
    // or exit on one of the paths above before the change is undone; empty forgets them. Only
    // the instance that installed the handlers keeps them, at most kMaxExitUndo bytes of them
    // (longer ones are not kept: half an escape sequence would do harm).
    static constexpr size_t kMaxExitUndo = 64;
    void set_exit_undo(std::string_view bytes) noexcept;

private:
    int fd_;
    termios saved_{};
    termios raw_modes_{};
    bool raw_ = false;
    std::atomic<bool> output_processing_{true};
    bool handlers_installed_ = false;
};

}  // namespace caretz
