#include "pty/signal_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace caretz {

namespace {

// The write ends, by signal number, for the handler (which may touch nothing else).
int g_write_ends[NSIG];
int g_read_ends[NSIG];
bool g_made[NSIG];

void on_signal(int sig) {
    int saved = errno;
    char c = 0;
    [[maybe_unused]] ssize_t n = ::write(g_write_ends[sig], &c, 1);
    errno = saved;
}

}  // namespace

int signal_pipe(int sig, int flags) {
    if (sig <= 0 || sig >= NSIG) return -1;
    if (!g_made[sig]) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
        g_read_ends[sig] = fds[0];
        g_write_ends[sig] = fds[1];
        g_made[sig] = true;
    }
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
    return g_read_ends[sig];
}

bool drain_signal_pipe(int fd) {
    bool came = false;
    char buf[64];
    while (fd >= 0 && ::read(fd, buf, sizeof buf) > 0) came = true;
    return came;
}

}  // namespace caretz
