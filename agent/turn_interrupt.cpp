#include "agent/turn_interrupt.h"

#include <string>
#include <thread>

namespace caretz {

bool TurnInterrupt::check() {
    if (requested_ || !keys_) return requested_;
    std::string typed = keys_->take_keys();
    auto at = typed.find('\x03');
    if (at == std::string::npos) {
        keys_->hold_for_prompt(typed);
        return false;
    }
    keys_->drop_held();
    keys_->give_back(std::string_view(typed).substr(at + 1));
    requested_ = true;
    return true;
}

bool TurnInterrupt::wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!check()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        if (!keys_) {
            std::this_thread::sleep_for(left);
            return false;
        }
        keys_->wait_for_keys(static_cast<int>(left.count()));
    }
    return true;
}

}  // namespace caretz
