#pragma once

#include <string>
#include <string_view>

namespace caretz {

// What the sandbox visibly refused a command (DESIGN.md section 5).
enum class RefusalKind { write, hidden, sudo, docker, bus };

struct Refusal {
    RefusalKind kind;
    std::string subject;   // the path, the socket, the sudo command line run, or "sudo"
    std::string evidence;  // the output line that proves it, trimmed, at most 300 bytes
    // Where it came from, when the subject alone does not say: for a sudo command line, that
    // the command ran it and in which folder.
    std::string origin = {};

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
