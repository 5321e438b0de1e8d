#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace caretz {

// The most a request head may take before the proxy gives up on it.
inline constexpr size_t kMaxRequestHead = 64 * 1024;

// What a client inside the sandbox asked the proxy for.
struct ProxyRequest {
    bool tunnel = false;  // CONNECT host:port (TLS); else a plain HTTP request
    std::string host;     // as the client named it, lower case; IPv6 without brackets
    uint16_t port = 0;
    // For a plain HTTP request: the head to send upstream, with the target in origin form
    // ("/path?query"), a Host header naming `host` and `port` in place of the client's, the
    // proxy's own headers removed and "Connection: close", so one connection carries requests
    // to this one destination only.
    std::string upstream_head;
};

// Parses a request head (everything up to and including the blank line). Accepts CONNECT
// with an authority, and absolute http:// URIs; nullopt for anything else, and for a head a
// server might read differently from the proxy (a bare CR or LF, a folded or malformed header
// line, a control character).
std::optional<ProxyRequest> parse_proxy_request(std::string_view head);

// The end of the head in `data` (just past "\r\n\r\n"), or 0 while it is incomplete.
size_t request_head_end(std::string_view data);

// A complete HTTP/1.1 response with a plain-text body, closing the connection.
std::string proxy_response(int status, std::string_view reason, std::string_view body);

// The 403 for a destination the network policy blocks: it names the host and says what keeps
// it out when `listed_as_denied` (sandbox.denied_domains, or the machine policy), else what
// would let it through (sandbox.allowed_domains).
std::string blocked_response(std::string_view host, uint16_t port, bool listed_as_denied);

}  // namespace caretz
