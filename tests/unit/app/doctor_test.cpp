#include "app/doctor.h"

#include <catch2/catch.hpp>

using namespace caretz;

TEST_CASE("doctor: a line per check, the problem's sentence carrying its fix") {
    CHECK(doctor_line({"bubblewrap", "bubblewrap 0.8.0 (/usr/bin/bwrap)", std::nullopt}) ==
          "ok       bubblewrap: bubblewrap 0.8.0 (/usr/bin/bwrap)");
    CHECK(doctor_line({"bubblewrap", "",
                       "bwrap is missing; install it with: apt-get install "
                       "bubblewrap"}) ==
          "problem  bubblewrap: bwrap is missing; install it with: apt-get install bubblewrap");
}

TEST_CASE("doctor: exit status 0 only when no check found a problem") {
    std::vector<DoctorCheck> checks = {{"a", "fine", std::nullopt}, {"b", "fine", std::nullopt}};
    CHECK(doctor_exit_status(checks) == 0);
    CHECK(doctor_summary(checks, 420) == "caretz doctor: no problems in 2 checks (420 ms)");
    checks.push_back({"c", "", "broken; fix it"});
    CHECK(doctor_exit_status(checks) == 1);
    CHECK(doctor_summary(checks, 7) == "caretz doctor: 1 problem in 3 checks (7 ms)");
    checks.push_back({"d", "", "broken too; fix it"});
    CHECK(doctor_summary(checks, 7) == "caretz doctor: 2 problems in 4 checks (7 ms)");
}
