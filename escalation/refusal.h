#pragma once

#include <string>
#include <string_view>

namespace caretz {

// What the sandbox visibly refused a command (DESIGN.md section 5).
enum class RefusalKind { write, hidden, sudo, docker, bus };

struct Refusal {
    RefusalKind kind;
    std::string subject;   // the path, the socket, or "sudo"
    std::string evidence;  // the output line that proves it, trimmed, at most 300 bytes

    bool operator==(const Refusal&) const = default;
};

constexpr std::string_view to_string(RefusalKind kind) {
    switch (kind) {
        case RefusalKind::write:
            return "write";
        case RefusalKind::hidden:
            return "hidden";
        case RefusalKind::sudo:
            return "sudo";
        case RefusalKind::docker:
            return "docker";
        case RefusalKind::bus:
            return "bus";
    }
    return "unknown";
}

}  // namespace caretz
