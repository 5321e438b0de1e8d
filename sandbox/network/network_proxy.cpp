#include "sandbox/network/network_proxy.h"

#include <dirent.h>
#include <netdb.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <system_error>

#include "pty/fd_io.h"
#include "pty/signal_pipe.h"
#include "sandbox/network/network_relay.h"
#include "sandbox/network/network_request.h"
#include "sandbox/sandbox.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

// How long a client inside may take to send its request head, and the proxy to connect.
constexpr int kHeadTimeoutSeconds = 60;
constexpr int kConnectTimeoutSeconds = 15;

void set_timeout(int fd, int option, int seconds) {
    timeval t{seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, option, &t, sizeof t);
}

void wake(int eventfd) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(eventfd, &one, sizeof one);
}

// Resolves the name on the host (the sandbox has no DNS) and connects to the first address
// that answers; on failure, `error` says why.
UniqueFd connect_upstream(const std::string& host, uint16_t port, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
        rc != 0) {
        error = std::string("cannot resolve the name (") + ::gai_strerror(rc) + ")";
        return UniqueFd();
    }
    UniqueFd connected;
    for (addrinfo* a = found; a && !connected.valid(); a = a->ai_next) {
        UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (!fd.valid()) continue;
        set_timeout(fd.get(), SO_SNDTIMEO, kConnectTimeoutSeconds);
        if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) {
            connected = std::move(fd);
        } else {
            error = std::strerror(errno);
        }
    }
    ::freeaddrinfo(found);
    return connected;
}

// Whether a process accepts connections on the UNIX socket at `path`; when unsure, yes.
bool someone_listens(const std::string& path) {
    return connect_unix_socket(path).valid() || (errno != ECONNREFUSED && errno != ENOENT);
}

std::string private_folder() {
    const std::string base = runtime_base();
    remove_stale_proxy_folders(base);
    std::string folder = base + "/caretz-net-XXXXXX";
    if (!::mkdtemp(folder.data()))
        throw std::runtime_error("cannot create a folder for the network proxy in " + base + ": " +
                                 std::strerror(errno));
    return folder;
}

}  // namespace

void remove_stale_proxy_folders(const std::string& base) {
    DIR* dir = ::opendir(base.c_str());
    if (!dir) return;
    const time_t now = ::time(nullptr);
    while (const dirent* entry = ::readdir(dir)) {
        if (std::string_view(entry->d_name).rfind("caretz-net-", 0) != 0) continue;
        const std::string folder = base + "/" + entry->d_name;
        struct stat st {};
        if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
            now - st.st_mtime < 60)
            continue;
        const std::string socket = folder + "/proxy.sock";
        if (someone_listens(socket)) continue;
        ::unlink(socket.c_str());
        ::rmdir(folder.c_str());
    }
    ::closedir(dir);
}

std::string_view to_string(NetworkDecision decision) {
    switch (decision) {
        case NetworkDecision::denied_by_policy:
            return "denied_by_policy";
        case NetworkDecision::allow_once:
            return "allow_once";
        case NetworkDecision::allow_session:
            return "allow_session";
        case NetworkDecision::session_allowance:
            return "session_allowance";
        case NetworkDecision::deny:
            return "deny";
        case NetworkDecision::timeout:
            return "timeout";
        case NetworkDecision::nobody_to_ask:
            return "nobody_to_ask";
    }
    return "deny";
}

NetworkProxy::NetworkProxy(DomainPolicy policy)
    : policy_(std::move(policy)),
      folder_(private_folder()),
      socket_path_(folder_ + "/proxy.sock"),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socket_path_.size() >= sizeof address.sun_path) {
        remove_socket_path();
        throw std::runtime_error("the network proxy's socket path is too long: " + socket_path_);
    }
    std::memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
    listener_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!listener_.valid() ||
        ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_.get(), SOMAXCONN) != 0 || !wake_.valid()) {
        std::string why = std::strerror(errno);
        remove_socket_path();
        throw std::runtime_error("cannot start the network proxy: " + why);
    }
    // The proxy's threads, and the handshake threads they start, take no signals.
    try {
        SignalsBlocked inherited;
        thread_ = std::thread([this] { loop(); });
    } catch (const std::system_error& e) {
        remove_socket_path();
        throw std::runtime_error(std::string("cannot start the network proxy: ") + e.what());
    }
}

NetworkProxy::~NetworkProxy() {
    begin_stop();
    thread_.join();
    remove_socket_path();
}

void NetworkProxy::begin_stop() {
    stopping_ = true;
    wake(wake_.get());
}

void NetworkProxy::remove_socket_path() {
    ::unlink(socket_path_.c_str());
    ::rmdir(folder_.c_str());
}

void NetworkProxy::set_approval(NetworkApproval* approval) {
    std::unique_lock lock(mutex_);
    questions_done_.wait(lock, [&] { return asking_ == 0; });
    approval_ = approval;
}

std::vector<std::pair<std::string, uint16_t>> NetworkProxy::session_allowances() {
    std::lock_guard lock(mutex_);
    return {allowed_for_session_.begin(), allowed_for_session_.end()};
}

void NetworkProxy::begin_command(bool may_ask) {
    {
        std::lock_guard lock(mutex_);
        may_ask_ = may_ask;
    }
    gate_.set_pump_running(true);
}

void NetworkProxy::end_command() {
    {
        std::lock_guard lock(mutex_);
        may_ask_ = false;
    }
    // With the pump gone, a question that waited for it goes ahead on the free terminal.
    gate_.set_pump_running(false);
    std::unique_lock lock(mutex_);
    questions_done_.wait(lock, [&] { return asking_ == 0; });
}

void NetworkProxy::loop() {
    RelayLoop relay;
    relay.watch(listener_.get(), [this] { accept_clients(); });
    relay.watch(wake_.get(), [&] {
        uint64_t count;
        [[maybe_unused]] ssize_t n = ::read(wake_.get(), &count, sizeof count);
        std::vector<std::pair<UniqueFd, UniqueFd>> ready;
        {
            std::lock_guard lock(mutex_);
            ready.swap(ready_);
        }
        for (auto& [client, upstream] : ready)
            relay.add_pair(std::move(client), std::move(upstream));
        take_finished();
    });
    while (!stopping_) relay.run_once(-1);

    // Handshakes blocked reading a request head give up once their client is shut down.
    std::vector<std::thread*> running;
    {
        std::lock_guard lock(mutex_);
        for (auto& h : handshakes_) {
            if (!h.done) ::shutdown(h.client, SHUT_RDWR);
            running.push_back(&h.thread);
        }
    }
    for (auto* t : running) t->join();
    handshakes_.clear();
    ready_.clear();
}

void NetworkProxy::accept_clients() {
    while (true) {
        int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return;
        }
        std::lock_guard lock(mutex_);
        auto self = handshakes_.emplace(handshakes_.end());
        self->client = fd;
        try {
            self->thread = std::thread(&NetworkProxy::handshake, this, self, UniqueFd(fd));
        } catch (const std::system_error&) {
            // Out of threads: this client's connection closes (the descriptor went with the
            // thread's arguments), the proxy goes on.
            handshakes_.erase(self);
        }
    }
}

void NetworkProxy::take_finished() {
    std::list<Handshake> finished;
    {
        std::lock_guard lock(mutex_);
        for (auto it = handshakes_.begin(); it != handshakes_.end();) {
            auto next = std::next(it);
            if (it->done) finished.splice(finished.end(), handshakes_, it);
            it = next;
        }
    }
    for (auto& h : finished) h.thread.join();
}

void NetworkProxy::handshake(std::list<Handshake>::iterator self, UniqueFd client) {
    UniqueFd upstream = open_upstream(client.get());
    std::lock_guard lock(mutex_);
    self->done = true;
    if (upstream.valid() && !stopping_) ready_.emplace_back(std::move(client), std::move(upstream));
    wake(wake_.get());
}

UniqueFd NetworkProxy::open_upstream(int client) {
    set_timeout(client, SO_RCVTIMEO, kHeadTimeoutSeconds);
    std::string data;
    size_t head_end = 0;
    char buf[8192];
    while ((head_end = request_head_end(data)) == 0) {
        if (data.size() > kMaxRequestHead) {
            send_all(client, proxy_response(431, "Request Header Fields Too Large",
                                            "Caretz's proxy: the request head is too large.\n"));
            return UniqueFd();
        }
        ssize_t n = ::recv(client, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || stopping_) return UniqueFd();
        data.append(buf, static_cast<size_t>(n));
    }
    auto request = parse_proxy_request(std::string_view(data).substr(0, head_end));
    if (!request) {
        send_all(client,
                 proxy_response(400, "Bad Request",
                                "Caretz's proxy takes CONNECT and plain http:// requests only, "
                                "with a host name of letters, digits, '-', '_' and '.', and "
                                "header lines of a name, a colon and a value without control "
                                "characters.\n"));
        return UniqueFd();
    }
    const DomainVerdict verdict = policy_.check(request->host, request->port);
    if (verdict == DomainVerdict::denied)
        record(request->host, request->port, NetworkDecision::denied_by_policy);
    if (verdict == DomainVerdict::denied ||
        (verdict == DomainVerdict::unlisted && !user_admits(request->host, request->port))) {
        send_all(client,
                 blocked_response(request->host, request->port, verdict == DomainVerdict::denied));
        return UniqueFd();
    }
    std::string error;
    UniqueFd upstream = connect_upstream(request->host, request->port, error);
    if (!upstream.valid()) {
        send_all(client, proxy_response(502, "Bad Gateway",
                                        "Caretz's proxy could not reach " + request->host + ":" +
                                            std::to_string(request->port) + ": " + error + "\n"));
        return UniqueFd();
    }
    // Bytes the client sent after the head (a TLS hello, a request body) go on upstream.
    std::string_view rest = std::string_view(data).substr(head_end);
    const bool sent =
        request->tunnel
            ? send_all(client, "HTTP/1.1 200 Connection established\r\n\r\n") &&
                  send_all(upstream.get(), rest)
            : send_all(upstream.get(), request->upstream_head) && send_all(upstream.get(), rest);
    return sent ? std::move(upstream) : UniqueFd();
}

bool NetworkProxy::user_admits(const std::string& host, uint16_t port) {
    NetworkDecision decision = ask_user(host, port);
    // Like the sandbox-off offer: an allow that is not in the audit log lets nothing through.
    const bool recorded = record(host, port, decision);
    return recorded &&
           (decision == NetworkDecision::allow_once || decision == NetworkDecision::allow_session ||
            decision == NetworkDecision::session_allowance);
}

NetworkDecision NetworkProxy::ask_user(const std::string& host, uint16_t port) {
    const auto destination = std::make_pair(host, port);
    {
        std::lock_guard lock(mutex_);
        if (allowed_for_session_.count(destination)) return NetworkDecision::session_allowance;
        if (!approval_ || !may_ask_) return NetworkDecision::nobody_to_ask;
    }
    std::lock_guard one_at_a_time(question_);
    NetworkApproval* approval;
    {
        std::lock_guard lock(mutex_);
        // While this connection waited its turn, an answer may have covered it, or the
        // command may have ended.
        if (allowed_for_session_.count(destination)) return NetworkDecision::session_allowance;
        if (!approval_ || !may_ask_ || stopping_) return NetworkDecision::nobody_to_ask;
        approval = approval_;
        ++asking_;
    }
    gate_.pause();
    NetworkDecision decision = approval->ask(host, port);
    gate_.resume();
    std::lock_guard lock(mutex_);
    if (decision == NetworkDecision::allow_session) allowed_for_session_.insert(destination);
    --asking_;
    questions_done_.notify_all();
    return decision;
}

bool NetworkProxy::record(const std::string& host, uint16_t port, NetworkDecision decision) {
    // Under the lock, so the approval cannot be replaced (and destroyed) meanwhile. Without
    // one nobody was asked, and nothing is let through to record.
    std::lock_guard lock(mutex_);
    return !approval_ || approval_->record(host, port, decision);
}

std::unique_ptr<NetworkProxy> start_network_proxy(const SandboxPolicy& policy) {
    try {
        return std::make_unique<NetworkProxy>(
            DomainPolicy(policy.allowed_domains, policy.denied_domains, policy.domain_bound));
    } catch (const std::runtime_error& e) {
        throw SandboxStartError(e.what());
    }
}

}  // namespace caretz
