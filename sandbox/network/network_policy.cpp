#include "sandbox/network/network_policy.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace caretz {

namespace {

bool host_character(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

}  // namespace

bool is_plain_host(std::string_view host, bool ipv6) {
    if (ipv6) return !host.empty() && host.find_first_not_of("0123456789abcdef:.") == host.npos;
    return !host.empty() && !host.starts_with('.') &&
           std::all_of(host.begin(), host.end(), host_character);
}

std::optional<uint16_t> parse_port_number(std::string_view text) {
    unsigned value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535)
        return std::nullopt;
    return static_cast<uint16_t>(value);
}

std::string canonical_host(std::string_view host) {
    std::string out(host);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!out.empty() && out.back() == '.') out.pop_back();
    return out;
}

bool DomainPattern::matches(std::string_view host_name, uint16_t port_number) const {
    if (port && *port != port_number) return false;
    const std::string name = canonical_host(host_name);
    if (!subdomains) return name == host;
    return name.size() > host.size() + 1 && name.ends_with(host) &&
           name[name.size() - host.size() - 1] == '.';
}

std::optional<DomainPattern> parse_domain_pattern(std::string_view text) {
    DomainPattern pattern;
    std::string_view name = text;
    // "[::1]:8080" or "host:443"; a bare IPv6 address has more than one colon and no port.
    if (name.starts_with('[')) {
        auto close = name.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        std::string_view rest = name.substr(close + 1);
        name = name.substr(1, close - 1);
        if (!rest.empty()) {
            if (!rest.starts_with(':') || !(pattern.port = parse_port_number(rest.substr(1))))
                return std::nullopt;
        }
        pattern.host = canonical_host(name);
        if (!is_plain_host(pattern.host, true)) return std::nullopt;
        return pattern;
    }
    auto colon = name.find(':');
    if (colon != std::string_view::npos && name.find(':', colon + 1) == std::string_view::npos) {
        if (!(pattern.port = parse_port_number(name.substr(colon + 1)))) return std::nullopt;
        name = name.substr(0, colon);
    }
    if (name.starts_with("*.")) {
        pattern.subdomains = true;
        name.remove_prefix(2);
    }
    pattern.host = canonical_host(name);
    if (!is_plain_host(pattern.host, false)) return std::nullopt;
    return pattern;
}

bool DomainPattern::covers(const DomainPattern& other) const {
    if (port && other.port != port) return false;
    if (!subdomains) return !other.subdomains && other.host == host;
    return (other.subdomains && other.host == host) || other.host.ends_with("." + host);
}

namespace {

std::vector<DomainPattern> parsed_patterns(const std::vector<std::string>& texts) {
    std::vector<DomainPattern> out;
    for (const auto& text : texts)
        if (auto p = parse_domain_pattern(text)) out.push_back(*p);
    return out;
}

}  // namespace

DomainPolicy::DomainPolicy(const std::vector<std::string>& allowed,
                           const std::vector<std::string>& denied,
                           const std::optional<std::vector<std::string>>& bound)
    : allowed_(parsed_patterns(allowed)), denied_(parsed_patterns(denied)) {
    if (bound) bound_ = parsed_patterns(*bound);
}

DomainVerdict DomainPolicy::check(std::string_view host, uint16_t port) const {
    auto matching = [&](const DomainPattern& p) { return p.matches(host, port); };
    if (std::any_of(denied_.begin(), denied_.end(), matching)) return DomainVerdict::denied;
    if (bound_ && std::none_of(bound_->begin(), bound_->end(), matching))
        return DomainVerdict::denied;
    if (std::any_of(allowed_.begin(), allowed_.end(), matching)) return DomainVerdict::allowed;
    return DomainVerdict::unlisted;
}

}  // namespace caretz
