#include "sandbox/command_pump.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "pty/fd_io.h"
#include "pty/terminal.h"

namespace {

using caretz::CommandIo;
using caretz::CommandPump;
using caretz::Terminal;
using caretz::WindowSize;

struct Pipe {
    int read_end = -1, write_end = -1;
    Pipe() { REQUIRE(::pipe2(&read_end, O_CLOEXEC) == 0); }
    ~Pipe() {
        ::close(read_end);
        ::close(write_end);
    }
};

// A command that records what the pump sends it; it runs until told otherwise. A byte on
// `events` stands for its output.
class FakeCommand : public caretz::PumpTarget {
public:
    void watch(std::vector<pollfd>& fds) const override {
        fds.push_back({events.read_end, POLLIN, 0});
    }
    bool on_ready(size_t) override {
        char c;
        return ::read(events.read_end, &c, 1) == 1;
    }
    bool command_running() const override { return running; }
    void send_keys(std::string_view k) override { keys += k; }
    void send_interrupt(char key) override { interrupts += key; }
    void resize(WindowSize) override {}

    Pipe events;
    bool running = true;
    std::string keys;
    std::string interrupts;
};

// A pump for `command` with keys typed on a pipe; `typing`: the command reads the terminal.
struct PumpOnKeys {
    explicit PumpOnKeys(bool typing) {
        io.terminal = &terminal;
        io.stdin_from_terminal = typing;
    }
    void type(std::string_view keys_typed) { caretz::write_all(keys.write_end, keys_typed); }

    Pipe keys;
    Terminal terminal{keys.read_end, -1};
    CommandIo io;
    FakeCommand command;
    CommandPump pump{command, io, nullptr, /*output_from_pty=*/false};
};

}  // namespace

TEST_CASE("CommandPump gives a typing command every key but holds what follows Ctrl-C",
          "[command_pump]") {
    PumpOnKeys t(true);

    t.type("ab");
    REQUIRE(t.pump.step());
    CHECK(t.command.keys == "ab");

    t.type("x\x03!echo next\r");
    REQUIRE(t.pump.step());
    CHECK(t.command.keys == "abx");
    CHECK(t.command.interrupts == "\x03");
    // The command ends within the hold: the keys are the prompt's, in order.
    t.command.running = false;
    CHECK(t.terminal.take_keys() == "!echo next\r");
}

TEST_CASE("CommandPump passes held keys on when the command reads on after Ctrl-C",
          "[command_pump]") {
    PumpOnKeys t(true);

    t.type("\x03more");
    REQUIRE(t.pump.step());
    CHECK(t.command.interrupts == "\x03");
    CHECK(t.command.keys.empty());
    auto start = std::chrono::steady_clock::now();
    while (t.command.keys.empty() &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(3))
        REQUIRE(t.pump.step());
    CHECK(t.command.keys == "more");
    CHECK(std::chrono::steady_clock::now() - start >=
          CommandPump::kKeysHeldAfterInterrupt - std::chrono::milliseconds(50));
}

TEST_CASE("CommandPump gives a model's command only the interrupt, repeated, and keeps the rest",
          "[command_pump]") {
    PumpOnKeys t(false);
    bool turn_stopped = false;
    t.io.on_interrupt_key = [&] { turn_stopped = true; };

    t.type("typed\x03later");
    REQUIRE(t.pump.step());
    CHECK(t.command.keys.empty());
    CHECK(t.command.interrupts == "\x03");
    CHECK(turn_stopped);
    // Pressed again a second later, while it has not ended.
    auto start = std::chrono::steady_clock::now();
    while (t.command.interrupts.size() < 2 &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(3))
        REQUIRE(t.pump.step());
    CHECK(t.command.interrupts == "\x03\x03");
    CHECK(t.terminal.take_keys() == "later");
    // What was typed before the interrupt went with the turn it stopped.
    t.terminal.release_held();
    CHECK(t.terminal.take_keys().empty());
}

TEST_CASE("CommandPump keeps what is typed during a model's command for the prompt",
          "[command_pump]") {
    PumpOnKeys t(false);
    t.type("and then df -h\r");
    REQUIRE(t.pump.step());
    CHECK(t.command.keys.empty());
    CHECK_FALSE(t.terminal.keys_waiting());
    t.terminal.release_held();
    CHECK(t.terminal.take_keys() == "and then df -h\r");
}

TEST_CASE("CommandPump reads no key before the command has started", "[command_pump]") {
    PumpOnKeys t(true);
    t.command.running = false;
    t.type("\x03");
    caretz::write_all(t.command.events.write_end, "o");
    REQUIRE(t.pump.step());
    CHECK(t.command.interrupts.empty());
    // Still in the terminal, for whoever holds it next.
    CHECK(t.terminal.take_keys() == "\x03");
}

TEST_CASE("CommandPump keeps the keys it sent, for lines the command leaves unread",
          "[command_pump]") {
    PumpOnKeys t(true);
    t.type("ab\rcd");
    REQUIRE(t.pump.step());
    t.type("\177e\r");  // a backspace, then e
    REQUIRE(t.pump.step());
    CHECK(t.pump.keys_sent() == "ab\rcd\177e\r");
    // Only the last kKeysKept bytes are kept, however long the command is typed into.
    for (char c : {'x', 'y'}) {
        const size_t sent = t.command.keys.size() + CommandPump::kKeysKept / 2 + 1000;
        t.type(std::string(CommandPump::kKeysKept / 2 + 1000, c));
        while (t.command.keys.size() < sent) REQUIRE(t.pump.step());
    }
    CHECK(t.pump.keys_sent().size() == CommandPump::kKeysKept);
    CHECK(t.pump.keys_sent().back() == 'y');
    CHECK(t.pump.keys_sent().find('x') != std::string_view::npos);

    PumpOnKeys model(false);
    model.type("ls\r");
    REQUIRE(model.pump.step());
    CHECK(model.pump.keys_sent().empty());
}

TEST_CASE("last_lines takes whole lines from the end, each \\r or \\n ending one",
          "[command_pump]") {
    using caretz::last_lines;
    CHECK(last_lines("one\rtwo\rthree\r", 1) == "three\r");
    CHECK(last_lines("one\rtwo\rthree\r", 2) == "two\rthree\r");
    CHECK(last_lines("one\rtwo\rthree\r", 3) == "one\rtwo\rthree\r");
    CHECK(last_lines("one\rtwo\rthree\r", 5) == "one\rtwo\rthree\r");
    // What follows the last line end is no whole line: the shell's Ctrl-U erases it.
    CHECK(last_lines("one\rtwo\rpart", 1) == "two\r");
    CHECK(last_lines("one\ntwo\r\n", 2) == "two\r\n");
    CHECK(last_lines("\r\r", 1) == "\r");
    CHECK(last_lines("\r\r", 2) == "\r\r");
    CHECK(last_lines("no line end", 1).empty());
    CHECK(last_lines("a\r", 0).empty());
    CHECK(last_lines("", 1).empty());
}
