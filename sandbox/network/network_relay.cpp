#include "sandbox/network/network_relay.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace caretz {

struct RelayLoop::Pair {
    UniqueFd fd[2];
    // buffer[i] holds bytes read from fd[i] that fd[1 - i] has not taken yet.
    std::vector<char> buffer[2] = {std::vector<char>(kBufferBytes),
                                   std::vector<char>(kBufferBytes)};
    size_t start[2] = {0, 0};
    size_t end[2] = {0, 0};
    bool input_ended[2] = {false, false};
    uint32_t interest[2] = {0, 0};  // what epoll watches on fd[i]; 0: not registered

    bool pending(int i) const { return start[i] < end[i]; }
    bool finished() const { return input_ended[0] && input_ended[1] && !pending(0) && !pending(1); }
};

UniqueFd connect_unix_socket(const std::string& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        return UniqueFd();
    }
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.valid() &&
        ::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
        fd.reset();
    return fd;
}

RelayLoop::RelayLoop() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {}

RelayLoop::~RelayLoop() = default;

void RelayLoop::add_pair(UniqueFd a, UniqueFd b) {
    auto pair = std::make_unique<Pair>();
    pair->fd[0] = std::move(a);
    pair->fd[1] = std::move(b);
    Pair* p = pair.get();
    pairs_[p] = std::move(pair);
    for (int side = 0; side < 2; ++side) {
        int fd = p->fd[side].get();
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
        entries_[fd] = Entry{p, side, {}};
        update_interest(*p, side);
    }
}

void RelayLoop::watch(int fd, std::function<void()> on_readable) {
    entries_[fd] = Entry{nullptr, 0, std::move(on_readable)};
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev);
}

void RelayLoop::run_once(int timeout_ms) {
    epoll_event events[64];
    int n = ::epoll_wait(epoll_.get(), events, 64, timeout_ms);
    for (int i = 0; i < n; ++i) {
        // An earlier event of this batch may have closed the descriptor.
        auto it = entries_.find(events[i].data.fd);
        if (it == entries_.end()) continue;
        if (!it->second.pair) {
            it->second.on_readable();
            continue;
        }
        handle(*it->second.pair, it->second.side, events[i].events);
    }
}

void RelayLoop::handle(Pair& pair, int side, uint32_t events) {
    bool ok = true;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) ok = move(pair, side);
    if (ok && (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))) ok = move(pair, 1 - side);
    if (!ok || pair.finished()) {
        close_pair(pair);
        return;
    }
    update_interest(pair, 0);
    update_interest(pair, 1);
}

bool RelayLoop::move(Pair& pair, int from) {
    const int to = 1 - from;
    const int in = pair.fd[from].get(), out = pair.fd[to].get();
    std::vector<char>& buffer = pair.buffer[from];
    size_t& start = pair.start[from];
    size_t& end = pair.end[from];
    // A few reads per event at most, so one fast connection cannot starve the others.
    for (int reads = 0;;) {
        while (start < end) {
            ssize_t n = ::send(out, buffer.data() + start, end - start, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
            if (n < 0) return false;
            start += static_cast<size_t>(n);
        }
        start = end = 0;
        if (pair.input_ended[from] || reads == 4) return true;
        ssize_t n = ::read(in, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n < 0) return false;
        ++reads;
        if (n == 0) {
            // The buffer is empty here, so the end of input goes on at once: left for a later
            // event it would be lost, as epoll stops watching a side whose input has ended.
            pair.input_ended[from] = true;
            ::shutdown(out, SHUT_WR);
            return true;
        }
        end = static_cast<size_t>(n);
    }
}

void RelayLoop::update_interest(Pair& pair, int side) {
    uint32_t want = 0;
    if (!pair.input_ended[side] && !pair.pending(side)) want |= EPOLLIN;
    if (pair.pending(1 - side)) want |= EPOLLOUT;
    if (want == pair.interest[side]) return;
    epoll_event ev{};
    ev.events = want;
    ev.data.fd = pair.fd[side].get();
    // Nothing to do on this side: leave epoll, which would otherwise keep reporting a hang-up.
    int op = want == 0 ? EPOLL_CTL_DEL : pair.interest[side] == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    ::epoll_ctl(epoll_.get(), op, pair.fd[side].get(), &ev);
    pair.interest[side] = want;
}

void RelayLoop::close_pair(Pair& pair) {
    for (int side = 0; side < 2; ++side) {
        if (pair.interest[side] != 0)
            ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, pair.fd[side].get(), nullptr);
        entries_.erase(pair.fd[side].get());
    }
    pairs_.erase(&pair);
}

}  // namespace caretz
