#include "pty/terminal_modes.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "pty/pty.h"

namespace {

bool same_modes(const termios& a, const termios& b) {
    return a.c_iflag == b.c_iflag && a.c_oflag == b.c_oflag && a.c_cflag == b.c_cflag &&
           a.c_lflag == b.c_lflag && std::memcmp(a.c_cc, b.c_cc, sizeof a.c_cc) == 0;
}

termios modes_of(int fd) {
    termios t{};
    REQUIRE(::tcgetattr(fd, &t) == 0);
    return t;
}

// What the terminal has shown so far (what was written to the slave).
std::string drain(int master) {
    std::string out;
    char buf[256];
    pollfd p{master, POLLIN, 0};
    while (::poll(&p, 1, 50) > 0 && (p.revents & POLLIN)) {
        ssize_t n = ::read(master, buf, sizeof buf);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

enum class ChildEnd { sigterm, sighup, segfault, abort_call, exit_call };

// A child that takes over the terminal, goes raw and then ends as asked; returns its wait
// status. For the signal cases the parent sends the signal once the child is raw.
// `undo`: what the child's TerminalModes is to write after the modes should it die or exit;
// `then_undo` is set after it, as the undo in force.
int run_raw_child(const caretz::Pty& pty, ChildEnd end, std::string_view undo = {},
                  std::optional<std::string> then_undo = std::nullopt) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    // The std::exit case flushes stdio in the child; nothing of ours may be pending twice.
    std::cout.flush();
    std::fflush(nullptr);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        caretz::TerminalModes modes(pty.slave());
        modes.install_exit_handlers();
        modes.enter_raw();
        if (!undo.empty()) modes.set_exit_undo(undo);
        if (then_undo) modes.set_exit_undo(*then_undo);
        ssize_t ignored = ::write(ready[1], "r", 1);
        (void)ignored;
        switch (end) {
            case ChildEnd::segfault:
                ::raise(SIGSEGV);
                break;
            case ChildEnd::abort_call:
                std::abort();
            case ChildEnd::exit_call:
                std::exit(7);
            default:
                ::pause();
        }
        ::_exit(99);
    }
    ::close(ready[1]);
    char byte;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    ::close(ready[0]);
    if (end == ChildEnd::sigterm) ::kill(child, SIGTERM);
    if (end == ChildEnd::sighup) ::kill(child, SIGHUP);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    return status;
}

}  // namespace

TEST_CASE("raw mode is entered and the saved modes come back", "[terminal_modes]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    termios original = modes_of(pty.slave());
    REQUIRE((original.c_lflag & ICANON) != 0);
    {
        caretz::TerminalModes modes(pty.slave());
        modes.enter_raw();
        termios raw = modes_of(pty.slave());
        CHECK((raw.c_lflag & (ICANON | ECHO | ISIG)) == 0);
        CHECK(raw.c_oflag == original.c_oflag);
        CHECK(modes.raw());

        modes.restore();
        CHECK(same_modes(modes_of(pty.slave()), original));
        CHECK(drain(pty.master()) == "\x1b[?25h\x1b[?2004l");

        modes.enter_raw();
    }
    CHECK(same_modes(modes_of(pty.slave()), original));
    CHECK(drain(pty.master()) == "\x1b[?25h\x1b[?2004l");
}

TEST_CASE("restoring without raw mode writes nothing", "[terminal_modes]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    { caretz::TerminalModes modes(pty.slave()); }
    CHECK(drain(pty.master()).empty());
}

TEST_CASE("only one instance restores on exit paths", "[terminal_modes]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    {
        caretz::TerminalModes first(pty.slave());
        first.install_exit_handlers();
        caretz::TerminalModes second(pty.slave());
        CHECK_THROWS_AS(second.install_exit_handlers(), std::logic_error);
    }
    caretz::TerminalModes third(pty.slave());
    CHECK_NOTHROW(third.install_exit_handlers());
}

TEST_CASE("the handlers put the previous dispositions back", "[terminal_modes]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    struct sigaction before {};
    ::sigaction(SIGTERM, nullptr, &before);
    {
        caretz::TerminalModes modes(pty.slave());
        modes.install_exit_handlers();
        struct sigaction during {};
        ::sigaction(SIGTERM, nullptr, &during);
        CHECK(during.sa_handler != before.sa_handler);
    }
    struct sigaction after {};
    ::sigaction(SIGTERM, nullptr, &after);
    CHECK(after.sa_handler == before.sa_handler);
}

TEST_CASE("a signal the user ignores stays ignored", "[terminal_modes]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction before {};
    ::sigaction(SIGHUP, &ignore, &before);
    {
        caretz::TerminalModes modes(pty.slave());
        modes.install_exit_handlers();
        struct sigaction during {};
        ::sigaction(SIGHUP, nullptr, &during);
        CHECK(during.sa_handler == SIG_IGN);
    }
    ::sigaction(SIGHUP, &before, nullptr);
}

TEST_CASE("the terminal comes back when the process dies or exits", "[terminal_modes]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    termios original = modes_of(pty.slave());

    SECTION("SIGTERM") {
        int status = run_raw_child(pty, ChildEnd::sigterm);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGTERM);
    }
    SECTION("SIGHUP") {
        int status = run_raw_child(pty, ChildEnd::sighup);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGHUP);
    }
    SECTION("a crash") {
        int status = run_raw_child(pty, ChildEnd::segfault);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGSEGV);
    }
    SECTION("abort, as after an uncaught exception") {
        int status = run_raw_child(pty, ChildEnd::abort_call);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGABRT);
    }
    SECTION("std::exit") {
        int status = run_raw_child(pty, ChildEnd::exit_call);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 7);
    }
    CHECK(same_modes(modes_of(pty.slave()), original));
    CHECK(drain(pty.master()) == "\x1b[?25h\x1b[?2004l");
}

TEST_CASE("what was changed for a while is undone too when the process dies or exits",
          "[terminal_modes]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    termios original = modes_of(pty.slave());
    const std::string pop_title = "\x1b[23;0t";

    SECTION("SIGTERM") {
        int status = run_raw_child(pty, ChildEnd::sigterm, pop_title);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGTERM);
    }
    SECTION("SIGHUP") {
        int status = run_raw_child(pty, ChildEnd::sighup, pop_title);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGHUP);
    }
    SECTION("std::exit") {
        int status = run_raw_child(pty, ChildEnd::exit_call, pop_title);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 7);
    }
    CHECK(same_modes(modes_of(pty.slave()), original));
    CHECK(drain(pty.master()) == "\x1b[?25h\x1b[?2004l" + pop_title);
}

TEST_CASE("an undo that was forgotten, or is too long to keep whole, is not written",
          "[terminal_modes]") {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    const std::string pop_title = "\x1b[23;0t";
    SECTION("forgotten") {
        run_raw_child(pty, ChildEnd::sigterm, pop_title, "");
    }
    SECTION("too long") {
        run_raw_child(pty, ChildEnd::sigterm, pop_title,
                      std::string(caretz::TerminalModes::kMaxExitUndo + 1, 'x'));
    }
    SECTION("set where no handlers are installed") {
        caretz::TerminalModes modes(pty.slave());
        modes.enter_raw();
        modes.set_exit_undo(pop_title);
    }
    CHECK(drain(pty.master()) == "\x1b[?25h\x1b[?2004l");
}
