#include "agent/retry_policy.h"

#include <catch2/catch.hpp>

using namespace caretz;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("retry: 429 and 5xx back off exponentially, a bounded number of times", "[retry]") {
    RetryPolicy p;  // 4 attempts, 1 s first wait
    CHECK(p.wait_before_retry(1, 429, "", 0) == milliseconds(1000));
    CHECK(p.wait_before_retry(2, 500, "", 0) == milliseconds(2000));
    CHECK(p.wait_before_retry(3, 503, "", 0) == milliseconds(4000));
    CHECK_FALSE(p.wait_before_retry(4, 503, "", 0));
    CHECK(p.wait_before_retry(1, 529, "", 0));  // Anthropic's "overloaded"
}

TEST_CASE("retry: other statuses are not retried", "[retry]") {
    RetryPolicy p;
    for (long status : {400L, 401L, 403L, 404L, 422L})
        CHECK_FALSE(p.wait_before_retry(1, status, "1", 0));
}

TEST_CASE("retry: Retry-After is honoured, in seconds or as a date, within bounds", "[retry]") {
    RetryPolicy p;
    CHECK(p.wait_before_retry(1, 429, "3", 0) == milliseconds(3000));
    CHECK(p.wait_before_retry(1, 429, " 0 ", 0) == milliseconds(0));
    // 1994-11-06 08:49:37 UTC is 784111777.
    CHECK(p.wait_before_retry(1, 503, "Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 5) ==
          milliseconds(5000));
    // A wait longer than Caretz is willing to sit through ends the retries.
    CHECK_FALSE(p.wait_before_retry(1, 429, "3600", 0));
    // A header that is neither form falls back to backoff.
    CHECK(p.wait_before_retry(2, 429, "soon", 0) == milliseconds(2000));
}

TEST_CASE("retry: backoff never exceeds the longest wait", "[retry]") {
    RetryPolicy p;
    p.max_attempts = 30;
    CHECK(p.wait_before_retry(20, 500, "", 0) == milliseconds(seconds(60)));
}

TEST_CASE("retry: parse_retry_after", "[retry]") {
    CHECK(parse_retry_after("120", 0) == seconds(120));
    CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 10) == seconds(0));
    CHECK_FALSE(parse_retry_after("", 0));
    CHECK_FALSE(parse_retry_after("-1", 0));
    CHECK_FALSE(parse_retry_after("1.5", 0));
}
