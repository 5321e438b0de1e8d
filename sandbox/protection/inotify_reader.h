#pragma once

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "pty/unique_fd.h"

namespace caretz {

// Reads the watches' inotify events on a thread of its own, into memory, as they come: a
// command writing many files would otherwise fill the kernel's queue, and events would be
// lost. Between commands it keeps only what a check needs (new entries, and the events of
// watches on single files, which carry no name), so a background job writing its logs costs
// no memory.
class InotifyReader {
public:
    // Events held at most; past that they are lost, as past the kernel's queue.
    static constexpr size_t kMaxHeld = size_t{32} << 20;

    explicit InotifyReader(int inotify)
        : inotify_(inotify), stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
        if (stop_.valid()) thread_ = std::thread([this] { run(); });
    }
    ~InotifyReader() {
        if (!thread_.joinable()) return;
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(stop_.get(), &one, sizeof one);
        thread_.join();
    }

    // Reads what the kernel holds now; from then on every event is kept (`all`), or new
    // entries only.
    void keep_all(bool all) {
        std::lock_guard lock(mutex_);
        read_now();
        keep_all_ = all;
        recorded_from_ = all ? events_.size() : std::string::npos;
    }

    struct Taken {
        std::string events;
        size_t recorded_from;  // where the events kept whole begin in `events`
        bool lost;
    };
    // What was read, after reading what the kernel holds now.
    Taken take() {
        std::lock_guard lock(mutex_);
        read_now();
        Taken taken{std::move(events_), recorded_from_, lost_};
        events_.clear();
        lost_ = false;
        recorded_from_ = keep_all_ ? 0 : std::string::npos;
        return taken;
    }

private:
    void read_now() {
        alignas(inotify_event) char buf[65536];
        ssize_t n;
        while ((n = ::read(inotify_, buf, sizeof buf)) > 0) {
            for (ssize_t at = 0; at < n;) {
                inotify_event ev;
                std::memcpy(&ev, buf + at, sizeof ev);
                const size_t size = sizeof ev + ev.len;
                const bool needed = keep_all_ || ev.len == 0 ||
                                    (ev.mask & (IN_CREATE | IN_MOVED_TO | IN_Q_OVERFLOW));
                if (needed && events_.size() + size > kMaxHeld)
                    lost_ = true;
                else if (needed)
                    events_.append(buf + at, size);
                at += static_cast<ssize_t>(size);
            }
        }
    }

    void run() {
        while (true) {
            pollfd fds[2] = {{inotify_, POLLIN, 0}, {stop_.get(), POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
            if (fds[1].revents) return;
            {
                std::lock_guard lock(mutex_);
                read_now();
            }
            // A moment for the kernel to gather the next events (merging repeated writes to one
            // file): one wake-up for many events, not one for each.
            pollfd stop{stop_.get(), POLLIN, 0};
            if (::poll(&stop, 1, 5) > 0) return;
        }
    }

    const int inotify_;
    UniqueFd stop_;
    std::mutex mutex_;
    std::string events_;
    size_t recorded_from_ = std::string::npos;
    bool keep_all_ = false;
    bool lost_ = false;
    std::thread thread_;
};

}  // namespace caretz
