#include "sandbox/network/network_request.h"

#include <cctype>
#include <vector>

#include "sandbox/network/network_policy.h"

namespace caretz {

namespace {

bool equals_nocase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

// "host", "host:port" or "[v6]:port"; the port defaults to `default_port`.
bool parse_authority(std::string_view authority, uint16_t default_port, ProxyRequest& out) {
    std::string_view host = authority, port;
    if (authority.starts_with('[')) {
        auto close = authority.find(']');
        if (close == std::string_view::npos) return false;
        host = authority.substr(1, close - 1);
        std::string_view rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (!rest.starts_with(':')) return false;
            port = rest.substr(1);
        }
    } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return false;
    }
    out.host = canonical_host(host);
    if (!is_plain_host(out.host, authority.starts_with('['))) return false;
    if (port.empty()) {
        out.port = default_port;
        return default_port != 0;
    }
    auto number = parse_port_number(port);
    if (!number) return false;
    out.port = *number;
    return true;
}

// The head's lines, or nothing when a line holds a control character other than a tab: a bare
// CR or LF, which some servers take for the end of a line, would let a client slip a header
// (a second Host) past the proxy that the server then reads.
std::optional<std::vector<std::string_view>> split_lines(std::string_view head) {
    std::vector<std::string_view> lines;
    while (!head.empty()) {
        auto end = head.find("\r\n");
        if (end == std::string_view::npos) end = head.size();
        std::string_view line = head.substr(0, end);
        for (unsigned char c : line)
            if ((c < 0x20 && c != '\t') || c == 0x7f) return std::nullopt;
        lines.push_back(line);
        head.remove_prefix(std::min(head.size(), end + 2));
    }
    return lines;
}

// RFC 9110's token, which a method and a header name must be: a name with a space ("Host :")
// is one that a lenient server might still read as Host.
bool is_token(std::string_view text) {
    if (text.empty()) return false;
    for (unsigned char c : text)
        if (!std::isalnum(c) && std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) ==
                                    std::string_view::npos)
            return false;
    return true;
}

// The Host header's value for the destination that was judged: "[v6]" in brackets, the port
// only when it is not HTTP's own.
std::string host_header_value(const ProxyRequest& request) {
    std::string value =
        request.host.find(':') != std::string::npos ? "[" + request.host + "]" : request.host;
    if (request.port != 80) value += ":" + std::to_string(request.port);
    return value;
}

// Headers meant for the proxy, or for this one hop, that must not travel on.
bool hop_header(std::string_view name) {
    for (std::string_view hop :
         {"proxy-connection", "proxy-authorization", "connection", "keep-alive"})
        if (equals_nocase(name, hop)) return true;
    return false;
}

}  // namespace

size_t request_head_end(std::string_view data) {
    auto end = data.find("\r\n\r\n");
    return end == std::string_view::npos ? 0 : end + 4;
}

std::optional<ProxyRequest> parse_proxy_request(std::string_view head) {
    auto lines = split_lines(head);
    if (!lines || lines->empty()) return std::nullopt;
    std::string_view line = (*lines)[0];
    auto first_space = line.find(' ');
    auto last_space = line.rfind(' ');
    if (first_space == std::string_view::npos || first_space == last_space) return std::nullopt;
    std::string_view method = line.substr(0, first_space);
    std::string_view target = line.substr(first_space + 1, last_space - first_space - 1);
    std::string_view version = line.substr(last_space + 1);
    if (!is_token(method) || (version != "HTTP/1.1" && version != "HTTP/1.0") || target.empty() ||
        target.find_first_of(" \t") != std::string_view::npos)
        return std::nullopt;

    ProxyRequest request;
    if (method == "CONNECT") {
        request.tunnel = true;
        if (!parse_authority(target, 0, request)) return std::nullopt;
        return request;
    }
    constexpr std::string_view scheme = "http://";
    if (target.size() <= scheme.size() || !equals_nocase(target.substr(0, scheme.size()), scheme))
        return std::nullopt;
    target.remove_prefix(scheme.size());
    auto path_start = target.find_first_of("/?#");
    std::string_view authority = target.substr(0, path_start);
    std::string path(path_start == std::string_view::npos ? "/" : target.substr(path_start));
    if (path.starts_with('?')) path.insert(0, "/");
    if (auto fragment = path.find('#'); fragment != std::string::npos) path.resize(fragment);
    if (authority.find('@') != std::string_view::npos || !parse_authority(authority, 80, request))
        return std::nullopt;

    // The server gets the host that was judged, whatever Host the client sent (RFC 9112 3.2.2
    // asks this of a proxy): a client allowed to reach one server must not ask it for another
    // of its virtual hosts.
    std::string& out = request.upstream_head;
    out = std::string(method) + " " + path + " " + std::string(version) + "\r\n" +
          "Host: " + host_header_value(request) + "\r\n";
    for (size_t i = 1; i < lines->size(); ++i) {
        std::string_view header = (*lines)[i];
        if (header.empty()) continue;
        // Only "name: value" lines: a folded line (which RFC 9112 5.2 lets a proxy refuse)
        // would continue the header before it, Host included, for a server that unfolds.
        auto colon = header.find(':');
        if (colon == std::string_view::npos || !is_token(header.substr(0, colon)))
            return std::nullopt;
        std::string_view name = header.substr(0, colon);
        if (hop_header(name) || equals_nocase(name, "host")) continue;
        out.append(header);
        out += "\r\n";
    }
    out += "Connection: close\r\n\r\n";
    return request;
}

std::string proxy_response(int status, std::string_view reason, std::string_view body) {
    return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
           "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + std::string(body);
}

std::string blocked_response(std::string_view host, uint16_t port, bool listed_as_denied) {
    const std::string name(host);
    std::string body = "Blocked by Caretz's network policy: " + name + ":" + std::to_string(port);
    if (listed_as_denied) {
        body +=
            " is denied: \"sandbox.denied_domains\" in Caretz's config "
            "(~/.config/caretz/config.json) lists it, or the machine policy "
            "(/etc/caretz/policy.json) keeps it out.\n";
    } else {
        body +=
            " is not an allowed destination for sandboxed commands.\n"
            "To allow it, add \"" +
            name +
            "\" to \"sandbox.allowed_domains\" in Caretz's "
            "config (~/.config/caretz/config.json), or allow it when Caretz asks in an "
            "interactive session.\n";
    }
    return proxy_response(403, "Forbidden", body);
}

}  // namespace caretz
