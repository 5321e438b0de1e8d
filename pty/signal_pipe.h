#pragma once

#include <pthread.h>
#include <signal.h>

namespace caretz {

// Turns each delivery of `sig` into a byte on a pipe, so a poll() that watches the returned
// descriptor wakes for the signal, with no window between checking a flag and starting to
// wait. `flags` are the handler's sigaction flags (SA_RESTART, SA_NOCLDSTOP, ...). One pipe
// per signal, made on the first call; returns -1 when no pipe can be made.
int signal_pipe(int sig, int flags);

// Reads away what the pipe holds; true when the signal came since the last call.
bool drain_signal_pipe(int fd);

// Every signal blocked in this thread while it lives: a thread started meanwhile inherits the
// mask, so the signals (a resize, SIGTERM, SIGHUP) stay the main thread's, whose waits they
// interrupt.
class SignalsBlocked {
public:
    SignalsBlocked() {
        sigset_t all;
        ::sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &previous_);
    }
    ~SignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
    SignalsBlocked(const SignalsBlocked&) = delete;
    SignalsBlocked& operator=(const SignalsBlocked&) = delete;

private:
    sigset_t previous_;
};

}  // namespace caretz
