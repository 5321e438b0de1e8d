#include "sandbox/network/network_forwarder.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "pty/fd_io.h"
#include "pty/pty.h"
#include "pty/unique_fd.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/layer_gate.h"
#include "sandbox/network/network_relay.h"
#include "sandbox/spawn.h"

namespace caretz {

const std::string kProxySocketInside = std::string(kRuntimeDir) + "/proxy.sock";

namespace {

UniqueFd listen_on_loopback() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return fd;
    int on = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(kProxyPort);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd.get(), SOMAXCONN) != 0)
        fd.reset();
    return fd;
}

// Relays every connection to `listener` to the proxy until `keep_going` says stop.
template <typename KeepGoing>
void forward_connections(int listener, RelayLoop& relay, KeepGoing keep_going) {
    relay.watch(listener, [&] {
        int fd;
        while ((fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC)) >= 0) {
            UniqueFd client(fd);
            UniqueFd proxy = connect_unix_socket(kProxySocketInside);
            // Without the proxy the client sees its connection close, as with no network.
            if (proxy.valid()) relay.add_pair(std::move(client), std::move(proxy));
        }
    });
    while (keep_going()) relay.run_once(-1);
}

bool proxy_bound_in() {
    struct stat st {};
    return ::stat(kProxySocketInside.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// See kUnreadLinesFd: the lines typed ahead that the command did not read, for Caretz's prompt.
void report_unread_lines() {
    struct stat st;
    if (::fstat(kUnreadLinesFd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
    UniqueFd report(kUnreadLinesFd);
    if (auto lines = drop_pending_lines(STDIN_FILENO))
        write_all(report.get(), std::to_string(*lines));
}

}  // namespace

std::vector<std::string> proxy_bind_arguments(const std::string& host_socket) {
    return {"--bind", host_socket, kProxySocketInside};
}

Environment with_proxy_environment(Environment env) {
    const std::string url = "http://127.0.0.1:" + std::to_string(kProxyPort);
    for (const char* name :
         {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"})
        env[name] = url;
    for (const char* name : {"NO_PROXY", "no_proxy"}) env[name] = "localhost,127.0.0.1";
    return env;
}

UniqueFd listen_for_forwarder() {
    return proxy_bound_in() ? listen_on_loopback() : UniqueFd();
}

pid_t start_network_forwarder(UniqueFd listener) {
    if (!listener.valid()) return -1;
    pid_t pid = ::fork();
    if (pid != 0) return pid;
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    reset_signals_for_exec();
    // Only the listener: the supervisor's control socket and pipes are not the forwarder's.
    const int keep = listener.get();
    ::close_range(3, static_cast<unsigned>(keep) - 1, 0);
    ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0);
    RelayLoop relay;
    forward_connections(keep, relay, [] { return true; });
    ::_exit(0);
}

int run_network_forwarder_command(const std::vector<std::string>& command) {
    if (command.empty()) return 127;
    // First, so that Caretz puts the cache layer in while the forwarder gets ready.
    LayerGate layer_gate;
    UniqueFd listener = listen_on_loopback();
    if (!listener.valid())
        std::fprintf(stderr, "caretz: cannot listen on 127.0.0.1:%u for the network proxy: %s\n",
                     kProxyPort, std::strerror(errno));
    // The command runs once the cache layer is in place, or not at all (Caretz says why).
    if (!layer_gate.passed()) return 126;
    SpawnOptions options;
    options.search_path = true;
    pid_t child = spawn_process(command, options);
    if (child < 0) return 126;
    // Ctrl-C and Ctrl-\ reach the whole process group (see FreshSandbox); they are for the
    // command, and the forwarder stays to report how it ended.
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGQUIT, SIG_IGN);
    if (listener.valid()) {
        UniqueFd child_exit(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
        bool running = child_exit.valid();
        RelayLoop relay;
        if (running) relay.watch(child_exit.get(), [&] { running = false; });
        forward_connections(listener.get(), relay, [&] { return running; });
    }
    const int status = wait_for_exit(child);
    report_unread_lines();
    return status;
}

}  // namespace caretz
