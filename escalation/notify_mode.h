#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// How a question that waits for the user makes itself noticed (config key `notify`).
enum class NotifyMode {
    off,      // nothing on the terminal
    bell,     // the bell and the window title
    desktop,  // the bell, the title and a desktop notification (OSC 9 and OSC 777)
};

inline std::optional<NotifyMode> parse_notify_mode(std::string_view text) {
    if (text == "desktop") return NotifyMode::desktop;
    if (text == "bell") return NotifyMode::bell;
    if (text == "off") return NotifyMode::off;
    return std::nullopt;
}

inline std::string_view to_string(NotifyMode mode) {
    switch (mode) {
        case NotifyMode::off:
            return "off";
        case NotifyMode::bell:
            return "bell";
        case NotifyMode::desktop:
            break;
    }
    return "desktop";
}

struct NoticeSettings {
    NotifyMode mode = NotifyMode::desktop;
    // notify_command: a program and its arguments, run on the host with the question's summary
    // as one more argument and in $CARETZ_QUESTION; empty for none.
    std::vector<std::string> command;
};

}  // namespace caretz
