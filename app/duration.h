#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace caretz {

// Parses a duration such as "90s", "5m", "1h" or "1h30m" (units s, m, h; each number a
// whole count). Returns nullopt for anything else, including zero.
std::optional<std::chrono::seconds> parse_duration(std::string_view text);

}  // namespace caretz
