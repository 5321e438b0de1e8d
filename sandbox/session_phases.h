#pragma once

#include <optional>

namespace caretz {

// Where the session shell is, as told by its hook marks, and what that means for the command
// Caretz sent it. Pure: it is fed the marks in order and touches nothing.
//
//   started --> sent --C--> running --D--> finishing --B--> idle --sent--> sent
//
// A shell starts with its first command: its hook runs it once the user's rc is read, with no
// prompt before it. In `sent` the shell is still to start the command (reading the line that
// runs it, or its rc). A prompt drawn anew there (A, then B) means the line was dropped
// (something interrupted it) and the command never started: status 130. A B alone is the same
// prompt drawn again (after a window-size change) and changes nothing. The shell's exit ends
// whatever was going on.
class SessionPhases {
public:
    enum class Phase { idle, sent, running, finishing };

    Phase phase() const { return phase_; }
    // The command's output is what the shell prints between its start and end marks.
    bool command_running() const { return phase_ == Phase::running; }
    // The shell waits for a command (or is gone): the command sent last is over.
    bool idle() const { return phase_ == Phase::idle; }
    // The command sent last is over and its status known, though the shell may still be
    // drawing its prompt (the user's prompt code runs after the end mark).
    bool command_over() const { return phase_ == Phase::idle || phase_ == Phase::finishing; }
    // The command's exit status, once known.
    std::optional<int> exit_code() const { return exit_code_; }
    bool shell_exited() const { return shell_exited_; }
    // The command sent last showed its start mark.
    bool command_started() const { return command_started_; }

    // A shell started, with its first command.
    void shell_started();
    // Caretz sent the line that runs a command; only from idle.
    void command_sent();
    void prompt_start();
    void prompt_end();
    void command_start();
    void command_done(int status);
    void shell_exit(int status);

private:
    Phase phase_ = Phase::idle;  // no shell yet: nothing to wait for
    bool prompt_started_ = false;
    bool command_started_ = false;
    bool shell_exited_ = false;
    std::optional<int> exit_code_;
};

}  // namespace caretz
