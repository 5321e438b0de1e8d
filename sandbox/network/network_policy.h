#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// Where the network policy puts a destination.
enum class DomainVerdict { allowed, denied, unlisted };

// One entry of sandbox.allowed_domains or sandbox.denied_domains: an exact host
// ("deb.debian.org"), or "*.example.com" for every subdomain of example.com (not example.com
// itself), either one optionally limited to a port ("registry.npmjs.org:443").
struct DomainPattern {
    std::string host;  // lower case, without the "*." and without a trailing dot
    bool subdomains = false;
    std::optional<uint16_t> port;

    bool matches(std::string_view host_name, uint16_t port_number) const;
    // True when every destination `other` matches, this pattern matches too.
    bool covers(const DomainPattern& other) const;
};

// The pattern that `text` spells, or nullopt when it is not one (a URL, a path, a "*" inside
// the name, a bad port), so a config mistake stops Caretz instead of silently matching nothing.
std::optional<DomainPattern> parse_domain_pattern(std::string_view text);

// A TCP port, 1 to 65535, written in decimal.
std::optional<uint16_t> parse_port_number(std::string_view text);

// A host name in lower case without a trailing dot: "Example.COM." is example.com.
std::string canonical_host(std::string_view host);

// Whether a canonical host is a name or IPv4 address made of letters, digits, '-', '_' and
// '.' only, or (`ipv6`) an IPv6 address of hex digits, ':' and '.'. Any other byte (a NUL, a
// '%', a space) could make the name the policy judges differ from the one that is resolved.
bool is_plain_host(std::string_view host, bool ipv6);

// Allowed and denied destinations, judged on the host name the client asked for; a denied
// pattern wins over an allowed one. With a `bound` (a machine policy's), a destination outside
// it is denied too, so no approval can let it through.
class DomainPolicy {
public:
    DomainPolicy() = default;
    // Patterns that do not parse are ignored here; the config reader rejects them first.
    DomainPolicy(const std::vector<std::string>& allowed, const std::vector<std::string>& denied,
                 const std::optional<std::vector<std::string>>& bound = std::nullopt);

    DomainVerdict check(std::string_view host, uint16_t port) const;

private:
    std::vector<DomainPattern> allowed_;
    std::vector<DomainPattern> denied_;
    std::optional<std::vector<DomainPattern>> bound_;
};

}  // namespace caretz
