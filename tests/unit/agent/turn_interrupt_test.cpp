#include "agent/turn_interrupt.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "pty/fd_io.h"
#include "pty/terminal.h"

using caretz::Terminal;
using caretz::TurnInterrupt;

namespace {

struct Pipe {
    Pipe() { REQUIRE(::pipe2(fds, O_CLOEXEC) == 0); }
    ~Pipe() {
        ::close(fds[0]);
        ::close(fds[1]);
    }
    int fds[2];
};

// A terminal whose keys are typed on a pipe.
struct Keys {
    void type(const std::string& keys) { caretz::write_all(pipe.fds[1], keys); }
    Pipe pipe;
    Terminal terminal{pipe.fds[0], -1};
};

}  // namespace

TEST_CASE("what is typed during a turn waits for the next prompt", "[turn_interrupt]") {
    Keys k;
    {
        TurnInterrupt turn(&k.terminal);
        k.type("check the disk too\r");
        CHECK_FALSE(turn.wait(std::chrono::milliseconds(50)));
        // Held, not waiting: the turn's own waits do not wake for it.
        CHECK_FALSE(k.terminal.keys_waiting());
        k.type("and ");
        CHECK_FALSE(turn.check());
    }
    CHECK(k.terminal.take_keys() == "check the disk too\rand ");
}

TEST_CASE("Ctrl-C ends the turn, drops what was typed before it and keeps what came after",
          "[turn_interrupt]") {
    Keys k;
    {
        TurnInterrupt turn(&k.terminal);
        k.type("typed before");
        CHECK_FALSE(turn.check());
        k.type("more\003after\r");
        CHECK(turn.wait(std::chrono::milliseconds(1000)));
        CHECK(turn.requested());
    }
    CHECK(k.terminal.take_keys() == "after\r");
}

TEST_CASE("a question during the turn drops what was typed before it", "[turn_interrupt]") {
    Keys k;
    {
        TurnInterrupt turn(&k.terminal);
        k.type("o");
        CHECK_FALSE(turn.check());
        k.terminal.drop_typeahead();  // what ask_on_terminal does before it reads the answer
    }
    CHECK(k.terminal.take_keys().empty());
}
