#pragma once

#include <signal.h>

namespace caretz {

// Turns each delivery of `sig` into a byte on a pipe, so a poll() that watches the returned
// descriptor wakes for the signal, with no window between checking a flag and starting to
// wait. `flags` are the handler's sigaction flags (SA_RESTART, SA_NOCLDSTOP, ...). One pipe
// per signal, made on the first call; returns -1 when no pipe can be made.
int signal_pipe(int sig, int flags);

// Reads away what the pipe holds; true when the signal came since the last call.
bool drain_signal_pipe(int fd);

}  // namespace caretz
