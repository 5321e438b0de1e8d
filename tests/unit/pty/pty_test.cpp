#include "pty/pty.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "pty/fd_io.h"
#include "pty/unique_fd.h"

namespace {

std::string read_until_eof(int fd) {
    std::string out;
    char buf[256];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;  // EIO once the slave side is closed everywhere
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

}  // namespace

TEST_CASE("a PTY pair opens close-on-exec with the asked window size", "[pty]") {
    caretz::Pty pty = caretz::Pty::open({30, 100});
    CHECK(pty.master() >= 0);
    CHECK(pty.slave() >= 0);
    CHECK(::isatty(pty.slave()) == 1);
    CHECK(pty.slave_path().rfind("/dev/pts/", 0) == 0);
    CHECK((::fcntl(pty.master(), F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(pty.slave(), F_GETFD) & FD_CLOEXEC) != 0);
    caretz::WindowSize size = caretz::window_size(pty.slave());
    CHECK(size.rows == 30);
    CHECK(size.cols == 100);

    caretz::set_window_size(pty.master(), {12, 40});
    size = caretz::window_size(pty.slave());
    CHECK(size.rows == 12);
    CHECK(size.cols == 40);
}

TEST_CASE("a child gets the slave as its controlling terminal and stdio", "[pty]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        if (!caretz::attach_controlling_terminal(pty.slave())) ::_exit(100);
        bool own_session = ::getsid(0) == ::getpid();
        bool foreground = ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
        bool all_tty = ::isatty(0) && ::isatty(1) && ::isatty(2);
        bool inherits = (::fcntl(STDOUT_FILENO, F_GETFD) & FD_CLOEXEC) == 0;
        const char* report = own_session && foreground && all_tty && inherits ? "ok\n" : "bad\n";
        ssize_t ignored = ::write(STDOUT_FILENO, report, std::strlen(report));
        (void)ignored;
        ::_exit(0);
    }
    pty.close_slave();
    std::string output = read_until_eof(pty.master());
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(output == "ok\r\n");
}

TEST_CASE("a terminal whose other end is gone counts as hung up; a pipe's end does not") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    int slave = ::dup(pty.slave());
    pty = caretz::Pty::open({24, 80});  // closes the first pair's master (and its slave copy)
    char c;
    CHECK(::read(slave, &c, 1) <= 0);
    CHECK(caretz::terminal_hung_up(slave));
    ::close(slave);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::close(fds[1]);
    CHECK(::read(fds[0], &c, 1) == 0);
    CHECK_FALSE(caretz::terminal_hung_up(fds[0]));
    ::close(fds[0]);
}

TEST_CASE("a PTY for exact output passes newlines through unchanged", "[pty]") {
    for (bool exact : {false, true}) {
        caretz::Pty pty = caretz::Pty::open({24, 80}, exact);
        caretz::write_all(pty.slave(), "a\nb\r\n");
        char buf[64];
        ssize_t n = ::read(pty.master(), buf, sizeof buf);
        REQUIRE(n > 0);
        CHECK(std::string(buf, static_cast<size_t>(n)) == (exact ? "a\nb\r\n" : "a\r\nb\r\r\n"));
    }
}

TEST_CASE("a line reader on the slave is given the end of input, once", "[pty]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    pty.offer_end_of_input();
    pty.offer_end_of_input();  // one waits already: no second
    char buf[16];
    CHECK(::read(pty.slave(), buf, sizeof buf) == 0);
    // Nothing more waits: a non-blocking read finds nothing.
    int flags = ::fcntl(pty.slave(), F_GETFL);
    ::fcntl(pty.slave(), F_SETFL, flags | O_NONBLOCK);
    CHECK(::read(pty.slave(), buf, sizeof buf) < 0);
    CHECK(errno == EAGAIN);

    // A program in raw mode gets no byte it did not ask for.
    termios modes{};
    REQUIRE(::tcgetattr(pty.slave(), &modes) == 0);
    ::cfmakeraw(&modes);
    REQUIRE(::tcsetattr(pty.slave(), TCSANOW, &modes) == 0);
    pty.offer_end_of_input();
    CHECK(::read(pty.slave(), buf, sizeof buf) < 0);

    // Input typed but unread is dropped.
    caretz::write_all(pty.master(), "typed");
    ::usleep(50 * 1000);
    pty.drop_pending_input();
    CHECK(::read(pty.slave(), buf, sizeof buf) < 0);
}

TEST_CASE("an end of input offered is taken in as one before a switch to raw mode", "[pty]") {
    // The session shell switches its terminal to raw mode as it returns to its prompt. An end
    // of input offered just before must not reach it as a Ctrl-D, which would end it: the
    // offer is taken in under the modes it saw, not later on a kernel worker.
    caretz::Pty pty = caretz::Pty::open({24, 80});
    int flags = ::fcntl(pty.slave(), F_GETFL);
    ::fcntl(pty.slave(), F_SETFL, flags | O_NONBLOCK);
    termios cooked{};
    REQUIRE(::tcgetattr(pty.slave(), &cooked) == 0);
    termios raw = cooked;
    ::cfmakeraw(&raw);
    int ctrl_d = 0;
    for (int i = 0; i < 2000; ++i) {
        REQUIRE(::tcsetattr(pty.slave(), TCSANOW, &cooked) == 0);
        pty.offer_end_of_input();
        REQUIRE(::tcsetattr(pty.slave(), TCSANOW, &raw) == 0);
        ::usleep(20);
        char buf[16];
        ssize_t n;
        while ((n = ::read(pty.slave(), buf, sizeof buf)) > 0)
            ctrl_d += static_cast<int>(std::count(buf, buf + n, '\x04'));
        REQUIRE(::tcflush(pty.slave(), TCIFLUSH) == 0);
    }
    CHECK(ctrl_d == 0);
}

TEST_CASE("typed input left unread is dropped and its whole lines counted", "[pty]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    // Canonical mode: Enter's '\r' arrives as '\n'; a backspace edits the line; the partial
    // line at the end is no line, and goes too.
    caretz::write_all(pty.master(), "one\rtwx\177o\rpart");
    ::usleep(50 * 1000);
    CHECK(caretz::drop_pending_lines(pty.slave()) == 2);
    CHECK(caretz::drop_pending_lines(pty.slave()) == 0);
    int waiting = -1;
    CHECK(::ioctl(pty.slave(), TIOCINQ, &waiting) == 0);
    CHECK(waiting == 0);

    // Raw mode: every byte is there to read, and each '\r' or '\n' ends a line.
    termios modes{};
    REQUIRE(::tcgetattr(pty.slave(), &modes) == 0);
    ::cfmakeraw(&modes);
    REQUIRE(::tcsetattr(pty.slave(), TCSANOW, &modes) == 0);
    caretz::write_all(pty.master(), "a\rb\nc");
    ::usleep(50 * 1000);
    CHECK(caretz::drop_pending_lines(pty.slave()) == 2);
    caretz::UniqueFd not_a_terminal(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    CHECK_FALSE(caretz::drop_pending_lines(not_a_terminal.get()));
}
