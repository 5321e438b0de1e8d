#include "app/duration.h"

#include <catch2/catch.hpp>

using namespace caretz;
using std::chrono::seconds;

TEST_CASE("durations take s, m and h") {
    CHECK(parse_duration("90s") == seconds(90));
    CHECK(parse_duration("5m") == seconds(300));
    CHECK(parse_duration("1h") == seconds(3600));
    CHECK(parse_duration("1h30m") == seconds(5400));
    CHECK(parse_duration("2s") == seconds(2));
}

TEST_CASE("anything else is not a duration") {
    for (const char* bad :
         {"", "5", "m", "5x", "-5m", "0s", "1.5m", "5m ", " 5m", "5M", "99999999999h"})
        CHECK_FALSE(parse_duration(bad).has_value());
}
