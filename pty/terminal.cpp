#include "pty/terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

#include "pty/fd_io.h"
#include "pty/signal_pipe.h"

namespace caretz {

namespace {

// Hands the terminal's foreground to `pgrp`. SIGTTOU is held off: a process that is not in
// the foreground group would otherwise be stopped by changing it.
void set_foreground(int fd, pid_t pgrp) noexcept {
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTTOU);
    ::sigprocmask(SIG_BLOCK, &block, &old);
    ::tcsetpgrp(fd, pgrp);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

bool Terminal::standard_is_terminal() {
    return ::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO);
}

std::unique_ptr<Terminal> Terminal::open_standard() {
    if (!standard_is_terminal()) return nullptr;
    auto terminal = std::make_unique<Terminal>(STDIN_FILENO, STDOUT_FILENO);
    terminal->modes_->install_exit_handlers();
    // A resize wakes whatever waits (see resize_fd), with no window between a check and a wait.
    terminal->resize_fd_ = signal_pipe(SIGWINCH, SA_RESTART);
    terminal->enter_raw();
    return terminal;
}

Terminal::Terminal(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {
    if (!::isatty(in_fd_)) return;
    modes_.emplace(in_fd_);
    // The modes belong to the input's terminal: they reach the output only if it is the same.
    struct stat in, out;
    one_terminal_ =
        ::fstat(in_fd_, &in) == 0 && ::fstat(out_fd_, &out) == 0 && in.st_rdev == out.st_rdev;
}

Terminal::~Terminal() {
    if (resize_fd_ >= 0) ::signal(SIGWINCH, SIG_DFL);
}

void Terminal::undo_on_exit(std::string_view bytes) noexcept {
    // The modes' terminal is the input's; the bytes are for the output's, as write()'s are.
    if (modes_ && one_terminal_) modes_->set_exit_undo(bytes);
}

void Terminal::enter_raw() {
    if (modes_) modes_->enter_raw();
}

void Terminal::restore() noexcept {
    if (modes_) modes_->restore();
}

std::string Terminal::take_keys() {
    std::string keys = std::move(pending_);
    pending_.clear();
    if (input_closed_) return keys;
    pollfd p{in_fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return keys;
    char buf[4096];
    ssize_t n = ::read(in_fd_, buf, sizeof buf);
    if (n > 0) {
        keys.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        input_closed_ = true;
        hang_up_on_lost_terminal(in_fd_);
    }
    return keys;
}

bool Terminal::wait_for_keys(int timeout_ms) {
    if (!pending_.empty()) return true;
    if (input_closed_) return false;
    pollfd fds[2] = {{in_fd_, POLLIN, 0}, {resize_fd(), POLLIN, 0}};
    int ready = ::poll(fds, 2, timeout_ms);
    if (ready <= 0) return false;
    if (fds[1].revents & POLLIN) {
        resized_ = drain_signal_pipe(resize_fd_) || resized_;
        return false;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        pending_ = take_keys();
        return !pending_.empty();
    }
    return false;
}

void Terminal::give_back(std::string_view keys) {
    pending_.insert(0, keys);
}

void Terminal::release_held() {
    pending_.insert(0, held_);
    held_.clear();
}

void Terminal::drop_typeahead() {
    held_.clear();
    pending_.clear();
    drop_pending_input(in_fd_);
}

void Terminal::write(std::string_view text) const {
    // Each line ends in exactly one "\r\n" on the terminal, whichever way the text spells
    // it: with output processing on, the terminal turns '\n' into "\r\n" itself.
    if (!modes_) {  // no terminal (a pipe, in tests): nothing adds or takes a '\r'
        write_all(out_fd_, text);
        return;
    }
    const bool processed = modes_->adds_carriage_return();
    std::string lines;
    lines.reserve(text.size() + 16);
    for (size_t i = 0; i < text.size(); ++i) {
        if (processed && text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
        if (!processed && text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) lines += '\r';
        lines += text[i];
    }
    write_all(out_fd_, lines);
}

void Terminal::pass_output_through(bool on) {
    if (modes_ && one_terminal_) modes_->set_output_processing(!on);
}

void Terminal::reset_for_question() const {
    // A soft reset (colours, insert and origin modes, margins, charsets), then explicitly the
    // main screen, whole-screen scrolling, autowrap, ASCII in G0, a visible cursor and no mouse
    // or paste modes; then a clean screen (the output stays in the scrollback).
    write(
        "\x1b[!p\x1b[0m\x1b[?1049l\x1b[r\x1b[?6l\x1b[4l\x1b[?7h\x1b(B\x0f\x1b[?25h"
        "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l"
        "\x1b[H\x1b[2J");
}

std::optional<WindowSize> Terminal::take_resize() {
    const bool changed = resize_fd_ >= 0 && (drain_signal_pipe(resize_fd_) || resized_);
    resized_ = false;
    if (!changed) return std::nullopt;
    return terminal_size(out_fd_);
}

std::optional<WindowSize> Terminal::size() const {
    return terminal_size(out_fd_);
}

void Terminal::give_foreground_in_child() const noexcept {
    set_foreground(in_fd_, ::getpgrp());
}

void Terminal::hand_foreground_to(pid_t pgrp) {
    set_foreground(in_fd_, pgrp);
}

void Terminal::take_foreground_back() {
    set_foreground(in_fd_, ::getpgrp());
    enter_raw();
}

}  // namespace caretz
