#include "pty/terminal.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "pty/fd_io.h"
#include "pty/pty.h"

using caretz::Pty;
using caretz::Terminal;

TEST_CASE("Terminal hands out keys once, and keeps what is given back first", "[terminal]") {
    Pty pty = Pty::open({24, 80});
    Terminal terminal(pty.slave(), pty.slave());
    terminal.enter_raw();
    caretz::write_all(pty.master(), "abc");
    REQUIRE(terminal.wait_for_keys(1000));
    CHECK(terminal.take_keys() == "abc");
    CHECK(terminal.take_keys().empty());

    caretz::write_all(pty.master(), "2");
    REQUIRE(terminal.wait_for_keys(1000));
    terminal.give_back("1");
    CHECK(terminal.keys_waiting());
    CHECK(terminal.take_keys() == "12");
}

TEST_CASE("Terminal drops typeahead, given back or still in the terminal", "[terminal]") {
    Pty pty = Pty::open({24, 80});
    Terminal terminal(pty.slave(), pty.slave());
    terminal.enter_raw();
    terminal.give_back("o");
    caretz::write_all(pty.master(), "s");
    ::usleep(50 * 1000);
    terminal.drop_typeahead();
    CHECK_FALSE(terminal.keys_waiting());
    CHECK_FALSE(terminal.wait_for_keys(100));
    CHECK(terminal.take_keys().empty());
}

TEST_CASE("Terminal holds keys for the prompt apart, until released or dropped", "[terminal]") {
    Pty pty = Pty::open({24, 80});
    Terminal terminal(pty.slave(), pty.slave());
    terminal.enter_raw();
    terminal.hold_for_prompt("next question\r");
    // Held keys are not waiting keys: whoever waits during a turn does not wake for them.
    CHECK_FALSE(terminal.keys_waiting());
    CHECK_FALSE(terminal.wait_for_keys(100));
    CHECK(terminal.take_keys().empty());
    caretz::write_all(pty.master(), "later");
    REQUIRE(terminal.wait_for_keys(1000));
    terminal.release_held();
    CHECK(terminal.take_keys() == "next question\rlater");

    // A question drops them with the rest; so does drop_held().
    terminal.hold_for_prompt("o");
    terminal.drop_typeahead();
    terminal.release_held();
    CHECK(terminal.take_keys().empty());
    terminal.hold_for_prompt("s");
    terminal.drop_held();
    terminal.release_held();
    CHECK(terminal.take_keys().empty());
}

TEST_CASE("Terminal reports a closed input once what was given back is taken", "[terminal]") {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    Terminal terminal(fds[0], -1);
    caretz::write_all(fds[1], "x");
    ::close(fds[1]);
    CHECK(terminal.take_keys() == "x");
    CHECK(terminal.take_keys().empty());
    terminal.give_back("y");
    CHECK_FALSE(terminal.input_closed());
    CHECK(terminal.take_keys() == "y");
    CHECK(terminal.input_closed());
    CHECK_FALSE(terminal.wait_for_keys(100));
    ::close(fds[0]);
}

TEST_CASE("Terminal restores the modes it found", "[terminal]") {
    Pty pty = Pty::open({24, 80});
    termios before{};
    REQUIRE(::tcgetattr(pty.slave(), &before) == 0);
    {
        Terminal terminal(pty.slave(), pty.slave());
        terminal.enter_raw();
        termios raw{};
        REQUIRE(::tcgetattr(pty.slave(), &raw) == 0);
        CHECK_FALSE(raw.c_lflag & ICANON);
    }
    termios after{};
    REQUIRE(::tcgetattr(pty.slave(), &after) == 0);
    CHECK(after.c_lflag == before.c_lflag);
    CHECK(after.c_iflag == before.c_iflag);
}
