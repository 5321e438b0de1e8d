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

TEST_CASE("a duration is written the way it is read") {
    CHECK(format_duration(seconds(90)) == "1m30s");
    CHECK(format_duration(seconds(300)) == "5m");
    CHECK(format_duration(seconds(3600)) == "1h");
    CHECK(format_duration(seconds(5400)) == "1h30m");
    CHECK(format_duration(seconds(3601)) == "1h1s");
    CHECK(format_duration(seconds(2)) == "2s");
    for (int s : {1, 59, 61, 3599, 86400, 90061})
        CHECK(parse_duration(format_duration(seconds(s))) == seconds(s));
}
