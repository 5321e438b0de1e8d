#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace caretz {

// Parses a duration such as "90s", "5m", "1h" or "1h30m" (units s, m, h; each number a
// whole count). Returns nullopt for anything else, including zero.
std::optional<std::chrono::seconds> parse_duration(std::string_view text);

// The way parse_duration reads it back: 5400 seconds is "1h30m", 90 is "1m30s".
std::string format_duration(std::chrono::seconds duration);

}  // namespace caretz
