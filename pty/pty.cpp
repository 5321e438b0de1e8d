#include "pty/pty.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace caretz {

namespace {

[[noreturn]] void throw_errno(const char* what) {
    throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

Pty::Pty(UniqueFd master, UniqueFd slave, std::string slave_path)
    : master_(std::move(master)), slave_(std::move(slave)), slave_path_(std::move(slave_path)) {}

Pty Pty::open(WindowSize size, bool exact_output) {
    UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!master.valid()) throw_errno("posix_openpt");
    if (::grantpt(master.get()) != 0) throw_errno("grantpt");
    if (::unlockpt(master.get()) != 0) throw_errno("unlockpt");
    char name[128];
    if (int err = ::ptsname_r(master.get(), name, sizeof name); err != 0) {
        throw std::system_error(err, std::generic_category(), "ptsname_r");
    }
    UniqueFd slave(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!slave.valid()) throw_errno("open pty slave");
    set_window_size(master.get(), size);
    if (exact_output) {
        termios modes;
        if (::tcgetattr(slave.get(), &modes) != 0) throw_errno("tcgetattr");
        modes.c_oflag &= ~static_cast<tcflag_t>(OPOST);
        if (::tcsetattr(slave.get(), TCSANOW, &modes) != 0) throw_errno("tcsetattr");
    }
    return Pty(std::move(master), std::move(slave), name);
}

Pty Pty::adopt(UniqueFd master, UniqueFd slave) {
    return Pty(std::move(master), std::move(slave), "");
}

UniqueFd Pty::open_slave() const noexcept {
    // From the master, not by name: a pair adopted from the host has no name in the sandbox's
    // own /dev/pts.
    constexpr int flags = O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
    UniqueFd slave(::ioctl(master_.get(), TIOCGPTPEER, flags));
    if (!slave.valid() && !slave_path_.empty()) slave.reset(::open(slave_path_.c_str(), flags));
    return slave;
}

void Pty::offer_end_of_input() noexcept {
    termios modes;
    if (::tcgetattr(master_.get(), &modes) != 0 || !(modes.c_lflag & ICANON)) return;
    UniqueFd slave = open_slave();
    if (!slave.valid()) return;
    pollfd p{slave.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) != 0) return;  // input (or an end of input) waits already
    const char end = static_cast<char>(modes.c_cc[VEOF]);
    if (::write(master_.get(), &end, 1) != 1) return;
    // The line discipline takes in what the master wrote later, on a kernel worker, under the
    // modes of that moment; a poll of the slave has it do so now, under the modes just seen.
    ::poll(&p, 1, 0);
}

void Pty::drop_pending_input() noexcept {
    UniqueFd slave = open_slave();
    if (slave.valid()) caretz::drop_pending_input(slave.get());
}

void set_window_size(int fd, WindowSize size) {
    winsize ws{};
    ws.ws_row = size.rows;
    ws.ws_col = size.cols;
    if (::ioctl(fd, TIOCSWINSZ, &ws) != 0) throw_errno("TIOCSWINSZ");
}

WindowSize window_size(int fd) {
    winsize ws{};
    if (::ioctl(fd, TIOCGWINSZ, &ws) != 0) throw_errno("TIOCGWINSZ");
    return WindowSize{ws.ws_row, ws.ws_col};
}

bool attach_controlling_terminal(int slave_fd) noexcept {
    if (::setsid() < 0) return false;
    if (::ioctl(slave_fd, TIOCSCTTY, 0) != 0) return false;
    for (int target = STDIN_FILENO; target <= STDERR_FILENO; ++target) {
        // dup2 onto itself keeps close-on-exec, so clear it explicitly in that case.
        int result = target == slave_fd ? ::fcntl(target, F_SETFD, 0) : ::dup2(slave_fd, target);
        if (result < 0) return false;
    }
    if (slave_fd > STDERR_FILENO) ::close(slave_fd);
    return true;
}

void reset_signals_for_exec() noexcept {
    for (int sig :
         {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU})
        ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

bool drop_pending_input(int fd) noexcept {
    return ::tcflush(fd, TCIFLUSH) == 0;
}

std::optional<int> drop_pending_lines(int fd) noexcept {
    // What the terminal gives without waiting (in canonical mode, whole lines only) is read to
    // be counted; the rest is dropped.
    int lines = 0;
    int waiting = 0;
    char buf[4096];
    while (::ioctl(fd, TIOCINQ, &waiting) == 0 && waiting > 0) {
        ssize_t n = ::read(fd, buf, std::min(sizeof buf, static_cast<size_t>(waiting)));
        if (n <= 0) break;
        lines += static_cast<int>(std::count_if(buf, buf + n, ends_line));
    }
    if (!drop_pending_input(fd)) return std::nullopt;
    return lines;
}

std::optional<int> drop_controlling_terminal_input() noexcept {
    UniqueFd tty(::open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
    if (!tty.valid()) return std::nullopt;
    return drop_pending_lines(tty.get());
}

bool terminal_hung_up(int fd) noexcept {
    termios modes;
    // A hung-up terminal's descriptor answers every ioctl with EIO; a pipe says ENOTTY.
    return ::tcgetattr(fd, &modes) != 0 && errno == EIO;
}

void hang_up_on_lost_terminal(int fd) noexcept {
    if (terminal_hung_up(fd)) ::raise(SIGHUP);
}

std::optional<WindowSize> terminal_size(int fd) noexcept {
    try {
        return window_size(fd);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace caretz
