#include "pty/terminal_modes.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "pty/fd_io.h"

namespace caretz {

namespace {

constexpr int kExitSignals[] = {SIGTERM, SIGHUP,  SIGINT, SIGQUIT, SIGSEGV,
                                SIGBUS,  SIGABRT, SIGFPE, SIGILL};
constexpr int kExitSignalCount = static_cast<int>(std::size(kExitSignals));

// Shows the cursor and turns bracketed paste off.
constexpr char kVisibleStateReset[] = "\x1b[?25h\x1b[?2004l";

// What the signal handlers and the atexit hook need, in plain globals: a handler may only
// touch lock-free state. Written by the installing object before `armed` is set.
struct ExitRestoreState {
    int fd = -1;
    termios saved{};
    volatile sig_atomic_t raw = 0;
    volatile sig_atomic_t armed = 0;
    struct sigaction previous[kExitSignalCount] {};
    // set_exit_undo's bytes; the size is set last, once they are all in place.
    char undo[TerminalModes::kMaxExitUndo] = {};
    volatile sig_atomic_t undo_size = 0;
};
ExitRestoreState g_exit_state;
bool g_atexit_registered = false;

int set_modes(int fd, const termios& modes) {
    int result;
    do {
        result = ::tcsetattr(fd, TCSANOW, &modes);
    } while (result != 0 && errno == EINTR);
    return result;
}

// Async-signal-safe: tcsetattr and write only. The modes come first, then what was changed for a
// while (set_exit_undo), as a normal exit would undo them.
void restore_from_exit_state() {
    if (!g_exit_state.armed) return;
    int saved_errno = errno;
    set_modes(g_exit_state.fd, g_exit_state.saved);
    if (g_exit_state.raw) {
        write_all(g_exit_state.fd,
                  std::string_view(kVisibleStateReset, sizeof kVisibleStateReset - 1));
    }
    g_exit_state.raw = 0;
    if (g_exit_state.undo_size > 0) {
        write_all(g_exit_state.fd,
                  std::string_view(g_exit_state.undo, static_cast<size_t>(g_exit_state.undo_size)));
        g_exit_state.undo_size = 0;
    }
    errno = saved_errno;
}

void restore_and_die(int sig) {
    restore_from_exit_state();
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    ::sigaction(sig, &default_action, nullptr);
    sigset_t only_this;
    sigemptyset(&only_this);
    sigaddset(&only_this, sig);
    ::sigprocmask(SIG_UNBLOCK, &only_this, nullptr);
    ::raise(sig);
}

}  // namespace

TerminalModes::TerminalModes(int fd) : fd_(fd) {
    if (::tcgetattr(fd_, &saved_) != 0) {
        throw std::system_error(errno, std::generic_category(), "tcgetattr");
    }
}

TerminalModes::~TerminalModes() {
    restore();
    if (!handlers_installed_) return;
    g_exit_state.armed = 0;
    g_exit_state.undo_size = 0;
    for (int i = 0; i < kExitSignalCount; ++i) {
        ::sigaction(kExitSignals[i], &g_exit_state.previous[i], nullptr);
    }
}

void TerminalModes::enter_raw() {
    termios modes = saved_;
    ::cfmakeraw(&modes);
    modes.c_oflag = saved_.c_oflag;
    modes.c_cc[VMIN] = 1;
    modes.c_cc[VTIME] = 0;
    raw_modes_ = modes;
    output_processing_ = true;
    // Mark raw first: a signal between the two steps must still reset the visible state.
    raw_ = true;
    if (handlers_installed_) g_exit_state.raw = 1;
    if (set_modes(fd_, modes) != 0) {
        throw std::system_error(errno, std::generic_category(), "tcsetattr raw");
    }
}

bool TerminalModes::set_output_processing(bool on) noexcept {
    if (!raw_) return false;
    termios modes = raw_modes_;
    if (!on) modes.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    if (set_modes(fd_, modes) != 0) return false;
    output_processing_ = on;
    return true;
}

void TerminalModes::restore() noexcept {
    set_modes(fd_, saved_);
    output_processing_ = true;
    if (raw_) write_all(fd_, std::string_view(kVisibleStateReset, sizeof kVisibleStateReset - 1));
    raw_ = false;
    if (handlers_installed_) g_exit_state.raw = 0;
}

void TerminalModes::set_exit_undo(std::string_view bytes) noexcept {
    if (!handlers_installed_) return;
    g_exit_state.undo_size = 0;
    if (bytes.size() > kMaxExitUndo) return;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    bytes.copy(g_exit_state.undo, bytes.size());
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_exit_state.undo_size = static_cast<sig_atomic_t>(bytes.size());
}

void TerminalModes::install_exit_handlers() {
    if (handlers_installed_) return;
    if (g_exit_state.armed) {
        throw std::logic_error("another TerminalModes already restores the terminal on exit");
    }
    g_exit_state.fd = fd_;
    g_exit_state.saved = saved_;
    g_exit_state.raw = raw_ ? 1 : 0;
    g_exit_state.armed = 1;
    handlers_installed_ = true;
    struct sigaction action {};
    action.sa_handler = restore_and_die;
    sigfillset(&action.sa_mask);
    for (int i = 0; i < kExitSignalCount; ++i) {
        ::sigaction(kExitSignals[i], &action, &g_exit_state.previous[i]);
        // A signal the user chose to ignore (e.g. SIGHUP under nohup) must stay ignored.
        const struct sigaction& previous = g_exit_state.previous[i];
        if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) {
            ::sigaction(kExitSignals[i], &previous, nullptr);
        }
    }
    if (!g_atexit_registered) {
        std::atexit(restore_from_exit_state);
        g_atexit_registered = true;
    }
}

}  // namespace caretz
