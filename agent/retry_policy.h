#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>

namespace caretz {

// When to try a model request again after the server answered with a status that may pass
// (429, 5xx): exponential backoff from `first_wait`, or the server's Retry-After when it gives
// one, for at most `max_attempts` attempts. A Retry-After beyond `longest_wait` ends the
// retries instead: Caretz does not sit silent for an hour.
struct RetryPolicy {
    int max_attempts = 4;
    std::chrono::milliseconds first_wait{1000};
    std::chrono::seconds longest_wait{60};

    // The wait before the next attempt after attempt `attempt` (1 for the first) failed with
    // HTTP `status`; nullopt to stop. `retry_after` is the header's value (delay-seconds or an
    // HTTP date, compared with `now`), empty when absent.
    std::optional<std::chrono::milliseconds> wait_before_retry(int attempt, long status,
                                                               const std::string& retry_after,
                                                               std::time_t now) const;
};

// True for statuses that say "try again later": 408, 409, 429 and every 5xx.
bool retryable_status(long status);

// A Retry-After header value as a delay from `now`; nullopt when it is neither form.
std::optional<std::chrono::seconds> parse_retry_after(const std::string& value, std::time_t now);

}  // namespace caretz
