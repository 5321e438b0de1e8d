#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "pty/unique_fd.h"

namespace caretz {

// A stream socket (close-on-exec) connected to the UNIX socket at `path`; an invalid one, with
// errno set, when it cannot be (ENAMETOOLONG for a path too long for a socket address).
UniqueFd connect_unix_socket(const std::string& path);

// Copies bytes both ways between pairs of connected sockets, many pairs at once, on one
// thread (epoll, non-blocking). Each direction holds at most kBufferBytes: when the reader is
// slow the writer is not read from, so a large download streams through without piling up.
// A side's end of input is passed on as a half-close; a pair ends when both directions have
// ended, or at the first error.
class RelayLoop {
public:
    static constexpr size_t kBufferBytes = 64 * 1024;

    RelayLoop();
    ~RelayLoop();
    RelayLoop(const RelayLoop&) = delete;
    RelayLoop& operator=(const RelayLoop&) = delete;

    // Relays between `a` and `b` from now on; both become non-blocking.
    void add_pair(UniqueFd a, UniqueFd b);
    // Calls `on_readable` whenever `fd` (owned by the caller) can be read.
    void watch(int fd, std::function<void()> on_readable);
    // Waits up to `timeout_ms` (-1: forever) and handles what became ready.
    void run_once(int timeout_ms);
    size_t pair_count() const { return pairs_.size(); }

private:
    struct Pair;
    struct Entry {
        Pair* pair = nullptr;  // nullptr for a watched descriptor
        int side = 0;
        std::function<void()> on_readable;
    };

    void handle(Pair& pair, int side, uint32_t events);
    // Reads from side `from` and writes to the other side, as far as each can go now.
    bool move(Pair& pair, int from);
    void update_interest(Pair& pair, int side);
    void close_pair(Pair& pair);

    UniqueFd epoll_;
    std::unordered_map<int, Entry> entries_;
    std::unordered_map<Pair*, std::unique_ptr<Pair>> pairs_;
};

}  // namespace caretz
