#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pty/unique_fd.h"

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

// The most descriptors send_with_fds passes at once.
inline constexpr size_t kMaxPassedFds = 4;

// Sends `bytes` over Unix socket `fd` with `count` descriptors `fds` passed along (SCM_RIGHTS,
// at most kMaxPassedFds), retrying after signals, never raising SIGPIPE. Allocates nothing, so
// a vfork child may call it. Returns what sendmsg returns.
inline ssize_t send_with_fds(int fd, std::string_view bytes, const int* fds, size_t count) {
    iovec data{const_cast<char*>(bytes.data()), bytes.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
    cmsghdr* rights = CMSG_FIRSTHDR(&message);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int) * count);
    std::memcpy(CMSG_DATA(rights), fds, sizeof(int) * count);
    ssize_t sent;
    while ((sent = ::sendmsg(fd, &message, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return sent;
}

// Receives into `buf` from Unix socket `fd`, retrying after signals; the descriptors that came
// along (SCM_RIGHTS, at most kMaxPassedFds) are appended to `fds`, close-on-exec. `flags` go to
// recvmsg. Returns what recvmsg returns.
inline ssize_t receive_with_fds(int fd, char* buf, size_t size, std::vector<UniqueFd>& fds,
                                int flags = 0) {
    iovec into{buf, size};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
    msghdr message{};
    message.msg_iov = &into;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = ::recvmsg(fd, &message, flags | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n <= 0) return n;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int received;
            std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof received);
            fds.emplace_back(received);
        }
    }
    return n;
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
