#include "agent/retry_policy.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace caretz {

bool retryable_status(long status) {
    return status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
}

std::optional<std::chrono::seconds> parse_retry_after(const std::string& value, std::time_t now) {
    std::string v = value;
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    v.erase(0, std::min(v.size(), v.find_first_not_of(" \t")));
    if (v.empty()) return std::nullopt;
    if (std::all_of(v.begin(), v.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        if (v.size() > 9) return std::chrono::seconds(999999999);
        return std::chrono::seconds(std::stol(v));
    }
    std::tm tm{};
    const char* end = ::strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!end || *end != '\0') return std::nullopt;
    std::time_t at = ::timegm(&tm);
    return std::chrono::seconds(std::max<std::time_t>(0, at - now));
}

std::optional<std::chrono::milliseconds> RetryPolicy::wait_before_retry(
    int attempt, long status, const std::string& retry_after, std::time_t now) const {
    if (!retryable_status(status) || attempt >= max_attempts) return std::nullopt;
    if (auto asked = parse_retry_after(retry_after, now)) {
        if (*asked > longest_wait) return std::nullopt;
        return std::chrono::duration_cast<std::chrono::milliseconds>(*asked);
    }
    auto wait = first_wait * (1LL << std::min(attempt - 1, 20));
    return std::min<std::chrono::milliseconds>(wait, longest_wait);
}

}  // namespace caretz
