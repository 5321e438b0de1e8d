#include "sandbox/session_phases.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

namespace {

using caretz::SessionPhases;
using Phase = SessionPhases::Phase;

// Feeds events written as words: started, sent, A, B, C, D<status>, exit<status>.
SessionPhases after(const std::vector<std::string>& events) {
    SessionPhases phases;
    for (const auto& e : events) {
        if (e == "started")
            phases.shell_started();
        else if (e == "sent")
            phases.command_sent();
        else if (e == "A")
            phases.prompt_start();
        else if (e == "B")
            phases.prompt_end();
        else if (e == "C")
            phases.command_start();
        else if (e[0] == 'D')
            phases.command_done(std::stoi(e.substr(1)));
        else if (e.rfind("exit", 0) == 0)
            phases.shell_exit(std::stoi(e.substr(4)));
        else
            FAIL("unknown event " << e);
    }
    return phases;
}

}  // namespace

TEST_CASE("SessionPhases follows the shell's marks", "[session_phases]") {
    struct Row {
        const char* what;
        std::vector<std::string> events;
        Phase phase;
        std::optional<int> exit_code;
        bool shell_exited;
    };
    const std::vector<Row> rows = {
        {"no shell yet: nothing to wait for", {}, Phase::idle, std::nullopt, false},
        // A shell starts with its first command, which its hook runs with no prompt before it.
        {"a new shell is still to start its first command",
         {"started"},
         Phase::sent,
         std::nullopt,
         false},
        {"the start mark: it runs", {"started", "C"}, Phase::running, std::nullopt, false},
        {"the end mark carries the status", {"started", "C", "D3"}, Phase::finishing, 3, false},
        {"the next prompt: done", {"started", "C", "D3", "A", "B"}, Phase::idle, 3, false},
        {"a command sent at the prompt waits for its start",
         {"started", "C", "D0", "A", "B", "sent"},
         Phase::sent,
         std::nullopt,
         false},
        {"... then runs and reports its own status",
         {"started", "C", "D0", "A", "B", "sent", "C", "D4", "A", "B"},
         Phase::idle,
         4,
         false},
        // A window-size change makes the shell draw its prompt again: only the end mark
        // comes, and the command line it is reading still runs.
        {"a prompt redrawn while the line is read changes nothing",
         {"started", "C", "D0", "A", "B", "sent", "B"},
         Phase::sent,
         std::nullopt,
         false},
        {"... and the command then runs and reports its own status",
         {"started", "C", "D0", "A", "B", "sent", "B", "C", "D0", "A", "B"},
         Phase::idle,
         0,
         false},
        {"a redraw while idle keeps it idle",
         {"started", "C", "D0", "A", "B", "B", "B"},
         Phase::idle,
         0,
         false},
        {"a redraw while the command runs is its output, not a prompt",
         {"started", "C", "B"},
         Phase::running,
         std::nullopt,
         false},
        // A new prompt without a start: the line was dropped (Ctrl-C reached the shell).
        {"a new prompt instead of the command: it never started",
         {"started", "C", "D0", "A", "B", "sent", "A", "B"},
         Phase::idle,
         130,
         false},
        {"a new shell's first prompt without its command: it never started",
         {"started", "A", "B"},
         Phase::idle,
         130,
         false},
        {"the shell exits during a command: its status",
         {"started", "C", "exit7"},
         Phase::idle,
         7,
         true},
        {"the shell exits after the end mark: the command's status stands",
         {"started", "C", "D2", "exit0"},
         Phase::idle,
         2,
         true},
        {"the shell exits before its first command started",
         {"started", "exit1"},
         Phase::idle,
         1,
         true},
        {"a restarted shell starts over with its own first command",
         {"started", "C", "exit1", "started"},
         Phase::sent,
         std::nullopt,
         false},
        {"a command is not sent to a shell that is not idle",
         {"started", "C", "sent"},
         Phase::running,
         std::nullopt,
         false},
        {"a stray start mark while idle is ignored",
         {"started", "C", "D0", "A", "B", "C"},
         Phase::idle,
         0,
         false},
    };
    for (const auto& row : rows) {
        INFO(row.what);
        SessionPhases phases = after(row.events);
        CHECK(phases.phase() == row.phase);
        CHECK(phases.exit_code() == row.exit_code);
        CHECK(phases.shell_exited() == row.shell_exited);
        CHECK(phases.command_running() == (row.phase == Phase::running));
        CHECK(phases.idle() == (row.phase == Phase::idle));
        // A command is over at its end mark, before the prompt that follows it.
        CHECK(phases.command_over() == (row.phase == Phase::idle || row.phase == Phase::finishing));
    }
}

TEST_CASE("SessionPhases tells whether the command sent last started", "[session_phases]") {
    // A shell that ends before its first command's start mark ended while starting (its rc).
    CHECK_FALSE(after({"started", "exit1"}).command_started());
    CHECK(after({"started", "C", "exit1"}).command_started());
    CHECK(after({"started", "C", "D0", "A", "B"}).command_started());
    CHECK_FALSE(after({"started", "C", "D0", "A", "B", "sent"}).command_started());
    CHECK_FALSE(after({"started", "C", "exit1", "started"}).command_started());
}
