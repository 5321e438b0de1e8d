#pragma once

#include <string_view>

namespace caretz {

// Where a start's time goes, for the breakdown in bench/run.sh. With CARETZ_PHASE_TIMES=FILE in
// Caretz's environment, phase_done(NAME) appends "NAME MICROSECONDS" to FILE: the time since the
// previous phase ended, the first counted from when the binary's code began to run (after the
// dynamic loader). Without the variable nothing is measured or written.
void phase_done(std::string_view name);

}  // namespace caretz
