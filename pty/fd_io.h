#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <string>
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

// Replaces the file at `path` with `contents` (mode 0600): written beside it and renamed over
// it, so a reader never sees half of it, with `durable` also on the disk first. False when it
// could not be written; the file is as it was then.
inline bool replace_file(const std::string& path, std::string_view contents, bool durable) {
    const std::string temporary = path + "." + std::to_string(::getpid()) + ".tmp";
    int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    bool written = write_all(fd, contents) && (!durable || ::fsync(fd) == 0);
    written = ::close(fd) == 0 && written;
    if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
        ::unlink(temporary.c_str());
        return false;
    }
    return true;
}

// In a child just forked from a process with threads (async-signal-safe calls only): puts
// `fds` at the numbers `at` (ascending, below 10), whatever numbers they had, and closes every
// descriptor above the last, so that the child holds no end of the parent's sockets and pipes,
// whose peers would then never see them close. False when it could not.
template <size_t N>
bool arrange_fds(const int (&fds)[N], const int (&at)[N]) {
    int high[N];
    for (size_t i = 0; i < N; ++i)
        if ((high[i] = ::fcntl(fds[i], F_DUPFD, 10)) < 0) return false;
    for (size_t i = 0; i < N; ++i)
        if (::dup2(high[i], at[i]) != at[i]) return false;
    return ::close_range(static_cast<unsigned>(at[N - 1]) + 1, ~0U, 0) == 0;
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
