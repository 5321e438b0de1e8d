#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <utility>

namespace caretz {

// Writes all of `data` to a blocking descriptor, retrying after signals; false when the
// descriptor stopped taking bytes (closed pipe, error).
inline bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

// write_all for a socket whose other end may have gone (a proxy client, a bwrap that died):
// the send fails instead of raising SIGPIPE, which Caretz does not ignore.
inline bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

// Moves the process's standard input and output aside for a protocol of the caller's (ACP over
// stdio), leaving /dev/null as stdin and stderr as stdout, so nothing else that reads or prints
// can disturb the protocol. Returns the moved {input, output}; {-1, -1} on failure.
inline std::pair<int, int> take_standard_streams() {
    int in = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || out < 0 || devnull < 0) return {-1, -1};
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    ::close(devnull);
    return {in, out};
}

}  // namespace caretz
