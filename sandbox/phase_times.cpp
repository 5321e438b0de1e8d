#include "sandbox/phase_times.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace caretz {

namespace {

using Clock = std::chrono::steady_clock;

// Set while the binary's static objects are made, before main.
Clock::time_point last_mark = Clock::now();
const char* const kTimesFile = std::getenv("CARETZ_PHASE_TIMES");

}  // namespace

void phase_done(std::string_view name) {
    if (!kTimesFile || !*kTimesFile) return;
    const Clock::time_point now = Clock::now();
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now - last_mark);
    std::string line(name);
    line += ' ';
    line += std::to_string(micros.count());
    line += '\n';
    const int fd = ::open(kTimesFile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        (void)!::write(fd, line.data(), line.size());
        ::close(fd);
    }
    // The file's own cost belongs to no phase.
    last_mark = Clock::now();
}

}  // namespace caretz
