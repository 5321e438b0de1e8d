#pragma once

#include <chrono>

#include "pty/terminal.h"

namespace caretz {

// Ctrl-C during a model's turn. Caretz keeps the terminal in raw mode, so Ctrl-C arrives as a
// byte on the terminal's input, not as SIGINT; whatever waits during a turn (the model's
// stream, a retry's backoff, a command) watches the keys through this object.
class TurnInterrupt {
public:
    // `keys` is the terminal (for ACP, the pipe its cancel arrives on); nullptr when nobody
    // can interrupt.
    explicit TurnInterrupt(Terminal* keys = nullptr) : keys_(keys) {}
    // The turn is over: what was typed during it, and not dropped, is for the next prompt.
    ~TurnInterrupt() {
        if (keys_) keys_->release_held();
    }
    TurnInterrupt(const TurnInterrupt&) = delete;
    TurnInterrupt& operator=(const TurnInterrupt&) = delete;

    // The descriptor to watch for input, or -1 when there is nothing (more) to watch.
    int fd() const { return requested_ || !keys_ ? -1 : keys_->input_fd(); }
    // Takes what was typed, without waiting; true once Ctrl-C came. What is typed during a
    // turn was typed for Caretz's next prompt and waits for it (Terminal::hold_for_prompt),
    // where a question in between drops it, so it cannot answer one. Ctrl-C stops the turn
    // and drops what was typed before it; keys after it stay for the prompt.
    bool check();
    // Waits for `timeout`; returns early, true, when Ctrl-C comes.
    bool wait(std::chrono::milliseconds timeout);
    // Records a Ctrl-C that reached the terminal some other way (passed on to a command).
    void request() { requested_ = true; }
    bool requested() const { return requested_; }

private:
    Terminal* keys_;
    bool requested_ = false;
};

}  // namespace caretz
