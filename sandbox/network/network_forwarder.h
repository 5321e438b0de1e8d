#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/environment.h"

namespace caretz {

// The proxy as commands inside the sandbox see it: http://127.0.0.1:kProxyPort on the
// sandbox's own loopback (its network namespace has nothing else), where a forwarder relays
// every TCP connection to the host proxy's UNIX socket, bound in at kProxySocketInside.
inline constexpr uint16_t kProxyPort = 3128;
extern const std::string kProxySocketInside;

// The bwrap arguments that bind the host proxy's socket into the sandbox.
std::vector<std::string> proxy_bind_arguments(const std::string& host_socket);

// `env` with the proxy variables that curl, git, pip, npm and apt read, in both spellings;
// loopback stays direct.
Environment with_proxy_environment(Environment env);

// Session mode, in the supervisor, before the shell starts: listens on the sandbox's loopback
// when the proxy socket is bound in (else returns no descriptor). Connections wait there until
// the forwarder runs.
UniqueFd listen_for_forwarder();
// Starts the forwarder as a child process that relays `listener`'s connections to the proxy.
// Returns its pid, or -1.
pid_t start_network_forwarder(UniqueFd listener);

// Per-command mode: `caretz __netforward PROGRAM ARGS...` listens, runs PROGRAM as its child
// and forwards connections until PROGRAM ends; returns PROGRAM's exit status. When its stdin
// is a terminal and descriptor kUnreadLinesFd a pipe, it then drops what was typed into that
// terminal and left unread, and writes there how many whole lines that was (a decimal).
inline constexpr int kUnreadLinesFd = 5;
int run_network_forwarder_command(const std::vector<std::string>& command);

}  // namespace caretz
