#include "sandbox/network/network_gate.h"

#include <sys/eventfd.h>

#include <cstdint>

namespace caretz {

QuestionGate::QuestionGate() : event_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void QuestionGate::set_pump_running(bool running) {
    std::lock_guard lock(mutex_);
    pump_running_ = running;
    changed_.notify_all();
}

void QuestionGate::hold() {
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(event_.get(), &count, sizeof count);
    std::unique_lock lock(mutex_);
    if (!requested_) return;
    held_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !requested_; });
    held_ = false;
}

void QuestionGate::pause() {
    std::unique_lock lock(mutex_);
    requested_ = true;
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(event_.get(), &one, sizeof one);
    changed_.wait(lock, [&] { return held_ || !pump_running_; });
}

void QuestionGate::resume() {
    std::lock_guard lock(mutex_);
    requested_ = false;
    changed_.notify_all();
}

}  // namespace caretz
