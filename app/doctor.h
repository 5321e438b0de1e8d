#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/command_line.h"

namespace caretz {

// The outcome of one of `caretz doctor`'s checks.
struct DoctorCheck {
    std::string name;
    std::string detail;                  // what was found, when all is well
    std::optional<std::string> problem;  // what is wrong and how to fix it, as one sentence
};

// One line of the report: "ok       NAME: DETAIL" or "problem  NAME: PROBLEM".
std::string doctor_line(const DoctorCheck& check);

// The report's last line, counting the problems, and the exit status it goes with: 0 when
// nothing is wrong, 1 otherwise.
std::string doctor_summary(const std::vector<DoctorCheck>& checks, long milliseconds);
int doctor_exit_status(const std::vector<DoctorCheck>& checks);

// `caretz doctor`: checks what Caretz needs on this machine for this user (with the config,
// profile and model flags of `cl`), printing a line per check as it comes, and returns the
// exit status.
int run_doctor(const CommandLine& cl);

}  // namespace caretz
