#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/network/network_gate.h"
#include "sandbox/network/network_policy.h"
#include "sandbox/policy.h"

namespace caretz {

// What became of a connection to a destination the allowed list does not cover.
enum class NetworkDecision {
    denied_by_policy,   // sandbox.denied_domains names it, or it is outside the machine's bound
    allow_once,         // the user allowed this connection
    allow_session,      // the user allowed the destination for the session
    session_allowance,  // allowed earlier in the session: passed without asking
    deny,               // the user denied it
    timeout,            // nobody answered within --permission-timeout
    nobody_to_ask,      // no terminal, a background job or a subagent: denied unasked
};

std::string_view to_string(NetworkDecision decision);

// The user behind the proxy. Both calls come from the proxy's handshake threads, one
// question at a time, while the connection waits.
class NetworkApproval {
public:
    virtual ~NetworkApproval() = default;
    // Asks whether HOST:PORT may be reached: allow_once, allow_session, deny or timeout.
    virtual NetworkDecision ask(const std::string& host, uint16_t port) = 0;
    // Records one decision (the audit log); false when it could not, and then no connection
    // may go ahead on that decision.
    virtual bool record(const std::string& host, uint16_t port, NetworkDecision decision) = 0;
};

// The sandbox's only way out: an HTTP proxy (CONNECT and plain absolute-URI requests) on a
// UNIX socket that the sandbox gets bound in. It runs on a thread of its own: one epoll loop
// accepts clients and relays established connections; each new client's request head, policy
// check, question and upstream connect run on a short-lived handshake thread, so a slow DNS
// answer or a question on screen never stalls the traffic of established connections.
class NetworkProxy {
public:
    // Listens on a fresh socket in a private folder; throws std::runtime_error if it cannot.
    explicit NetworkProxy(DomainPolicy policy);
    // Stops accepting, ends every connection and joins all threads; removes the socket.
    ~NetworkProxy();
    // Tells the proxy's thread to stop (as the destructor does first) without waiting for it,
    // so that it winds down while its owner waits for something else.
    void begin_stop();
    NetworkProxy(const NetworkProxy&) = delete;
    NetworkProxy& operator=(const NetworkProxy&) = delete;

    const std::string& socket_path() const { return socket_path_; }
    // Removes the socket's path and folder from the host once a sandbox that lives as long as
    // the proxy has bound it in (the bind mount keeps it reachable there), so nothing is left
    // behind even when Caretz is killed without unwinding.
    void remove_socket_path();

    // Who is asked and told; nullptr for nobody. Waits for a question in progress to end.
    void set_approval(NetworkApproval* approval);

    // A foreground command runs from begin_command to end_command; only then, and only with
    // `may_ask`, is the user asked. end_command waits until no question is on screen, so the
    // terminal is free again when the command's result is shown.
    void begin_command(bool may_ask);
    void end_command();
    // The destinations the user allowed for the session so far.
    std::vector<std::pair<std::string, uint16_t>> session_allowances();

    // The pump of the foreground command stands still on this gate while the user is asked.
    QuestionGate& gate() { return gate_; }

private:
    struct Handshake {
        std::thread thread;
        int client = -1;  // shut down to unblock the thread when the proxy stops
        bool done = false;
    };

    void loop();
    void accept_clients();
    void take_finished();
    void handshake(std::list<Handshake>::iterator self, UniqueFd client);
    // Reads the request, applies the policy (asking if need be) and connects; answers the
    // client itself and returns no descriptor when the connection goes no further.
    UniqueFd open_upstream(int client);
    // For a destination the policy does not list: asks if someone may be asked, records the
    // decision, and says whether the connection may go ahead.
    bool user_admits(const std::string& host, uint16_t port);
    NetworkDecision ask_user(const std::string& host, uint16_t port);
    bool record(const std::string& host, uint16_t port, NetworkDecision decision);

    DomainPolicy policy_;
    std::string folder_;
    std::string socket_path_;
    UniqueFd listener_;
    UniqueFd wake_;  // eventfd: a handshake finished, or the proxy stops
    QuestionGate gate_;
    std::atomic<bool> stopping_{false};

    std::mutex mutex_;  // guards everything below
    std::condition_variable questions_done_;
    std::list<Handshake> handshakes_;
    std::vector<std::pair<UniqueFd, UniqueFd>> ready_;  // established: client, upstream
    NetworkApproval* approval_ = nullptr;
    bool may_ask_ = false;
    int asking_ = 0;
    std::set<std::pair<std::string, uint16_t>> allowed_for_session_;
    std::mutex question_;  // one question on screen at a time

    std::thread thread_;
};

// Removes from `base` this user's proxy folders (caretz-net-*) that a Caretz killed outright
// left behind: nobody listens on their socket any more. Folders changed in the last minute are
// left alone, as their Caretz may not have bound its socket yet. Each proxy does this in its
// base folder ($XDG_RUNTIME_DIR, else /tmp) before it makes its own.
void remove_stale_proxy_folders(const std::string& base);

// The proxy for a sandbox under `policy`; throws SandboxStartError when it cannot start.
std::unique_ptr<NetworkProxy> start_network_proxy(const SandboxPolicy& policy);

// Marks one foreground command for the proxy, when there is one (nullptr: none).
class ForegroundCommand {
public:
    ForegroundCommand(NetworkProxy* proxy, bool may_ask) : proxy_(proxy) {
        if (proxy_) proxy_->begin_command(may_ask);
    }
    ~ForegroundCommand() {
        if (proxy_) proxy_->end_command();
    }
    ForegroundCommand(const ForegroundCommand&) = delete;
    ForegroundCommand& operator=(const ForegroundCommand&) = delete;

private:
    NetworkProxy* proxy_;
};

}  // namespace caretz
