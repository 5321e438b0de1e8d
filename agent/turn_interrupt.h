#pragma once

#include <chrono>

namespace caretz {

// Ctrl-C during a model's turn. Caretz keeps the terminal in raw mode, so Ctrl-C arrives as a
// byte on the terminal's input, not as SIGINT; whatever waits during a turn (the model's
// stream, a retry's backoff, a command) watches that input through this object.
class TurnInterrupt {
public:
    // `input_fd` is the terminal's input; -1 when nobody can interrupt (no terminal).
    explicit TurnInterrupt(int input_fd = -1) : fd_(input_fd) {}

    // The descriptor to watch for input, or -1 when there is nothing (more) to watch.
    int fd() const { return requested_ ? -1 : fd_; }
    // Reads what was typed, without waiting; true once Ctrl-C came. Other keys are dropped,
    // so nothing typed during a turn can answer a later question.
    bool check();
    // Waits for `timeout`; returns early, true, when Ctrl-C comes.
    bool wait(std::chrono::milliseconds timeout);
    // Records a Ctrl-C that reached the terminal some other way (passed on to a command).
    void request() { requested_ = true; }
    bool requested() const { return requested_; }

private:
    int fd_;
    bool requested_ = false;
};

}  // namespace caretz
