#pragma once

#include <condition_variable>
#include <mutex>

#include "pty/unique_fd.h"

namespace caretz {

// Lets a network question take the terminal from a running command's pump. The pump polls
// fd() beside the terminal; when it becomes readable the pump calls hold(), which parks it
// (no terminal input read, no output written) until the question is answered. The asking
// thread brackets its question with pause() and resume().
class QuestionGate {
public:
    QuestionGate();

    // Readable while a question waits for the pump to stand still.
    int fd() const { return event_.get(); }

    // Pump side: whether a pump runs now. While none does, pause() returns at once, since
    // nothing else reads the terminal.
    void set_pump_running(bool running);
    // Pump side, when fd() is readable: blocks while a question is on screen.
    void hold();

    // Asking side: returns once the pump is parked, or when no pump runs.
    void pause();
    void resume();

private:
    UniqueFd event_;
    std::mutex mutex_;
    std::condition_variable changed_;
    bool pump_running_ = false;
    bool requested_ = false;
    bool held_ = false;
};

}  // namespace caretz
