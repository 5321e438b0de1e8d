#include "agent/turn_interrupt.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace caretz {

bool TurnInterrupt::check() {
    if (requested_ || fd_ < 0) return requested_;
    pollfd p{fd_, POLLIN, 0};
    while (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
        char buf[256];
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n <= 0) break;
        if (std::string_view(buf, static_cast<size_t>(n)).find('\x03') != std::string_view::npos)
            requested_ = true;
    }
    return requested_;
}

bool TurnInterrupt::wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!check()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, fd_ >= 0 ? 1 : 0, static_cast<int>(left.count())) < 0 && errno != EINTR)
            return false;
    }
    return true;
}

}  // namespace caretz
