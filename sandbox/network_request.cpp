#include "sandbox/network_request.h"

#include <cctype>
#include <vector>

#include "sandbox/network_policy.h"

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

std::vector<std::string_view> split_lines(std::string_view head) {
    std::vector<std::string_view> lines;
    while (!head.empty()) {
        auto end = head.find("\r\n");
        if (end == std::string_view::npos) end = head.size();
        lines.push_back(head.substr(0, end));
        head.remove_prefix(std::min(head.size(), end + 2));
    }
    return lines;
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
    std::vector<std::string_view> lines = split_lines(head);
    if (lines.empty()) return std::nullopt;
    std::string_view line = lines[0];
    auto first_space = line.find(' ');
    auto last_space = line.rfind(' ');
    if (first_space == std::string_view::npos || first_space == last_space) return std::nullopt;
    std::string_view method = line.substr(0, first_space);
    std::string_view target = line.substr(first_space + 1, last_space - first_space - 1);
    std::string_view version = line.substr(last_space + 1);
    if (!version.starts_with("HTTP/1.") || target.empty()) return std::nullopt;

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

    std::string& out = request.upstream_head;
    out = std::string(method) + " " + path + " " + std::string(version) + "\r\n";
    bool has_host = false;
    for (size_t i = 1; i < lines.size(); ++i) {
        std::string_view header = lines[i];
        auto colon = header.find(':');
        if (colon == std::string_view::npos) continue;
        std::string_view name = header.substr(0, colon);
        if (hop_header(name)) continue;
        if (equals_nocase(name, "host")) has_host = true;
        out.append(header);
        out += "\r\n";
    }
    if (!has_host) out += "Host: " + std::string(authority) + "\r\n";
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
            " is listed in \"sandbox.denied_domains\" in Caretz's config "
            "(~/.config/caretz/config.json); remove it there to reach it.\n";
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
