#include "sandbox/network/network_policy.h"

#include <catch2/catch.hpp>

using namespace caretz;

TEST_CASE("Domain patterns: exact hosts, subdomains, ports", "[network_policy]") {
    struct Case {
        const char* pattern;
        const char* host;
        uint16_t port;
        bool matches;
    };
    const Case cases[] = {
        {"deb.debian.org", "deb.debian.org", 80, true},
        {"deb.debian.org", "DEB.Debian.ORG.", 443, true},  // case and the root dot do not matter
        {"deb.debian.org", "security.debian.org", 80, false},
        {"deb.debian.org", "evil-deb.debian.org", 80, false},
        {"debian.org", "deb.debian.org", 80, false},  // an exact host is not its subdomains
        {"*.npmjs.org", "registry.npmjs.org", 443, true},
        {"*.npmjs.org", "a.b.npmjs.org", 443, true},
        {"*.npmjs.org", "npmjs.org", 443, false},  // subdomains only
        {"*.npmjs.org", "evilnpmjs.org", 443, false},
        {"*.npmjs.org", "npmjs.org.evil.com", 443, false},
        {"pypi.org:443", "pypi.org", 443, true},
        {"pypi.org:443", "pypi.org", 80, false},
        {"*.example.com:8443", "a.example.com", 8443, true},
        {"*.example.com:8443", "a.example.com", 443, false},
        {"127.0.0.1", "127.0.0.1", 8080, true},
        {"[::1]:8080", "::1", 8080, true},
        {"[::1]", "::1", 1, true},
    };
    for (const auto& c : cases) {
        INFO(c.pattern << " against " << c.host << ":" << c.port);
        auto pattern = parse_domain_pattern(c.pattern);
        REQUIRE(pattern);
        CHECK(pattern->matches(c.host, c.port) == c.matches);
    }
}

TEST_CASE("Text that is no host pattern is rejected", "[network_policy]") {
    for (const char* bad :
         {"", "*", "*.", "http://example.com", "example.com/path", "*example.com",
          "a.*.example.com", "example.com:0", "example.com:65536", "example.com:http",
          "user@example.com", "[::1", "[::1]x", ".example.com", "exa mple.com"}) {
        INFO(bad);
        CHECK_FALSE(parse_domain_pattern(bad));
    }
}

TEST_CASE("A denied pattern beats an allowed one; the rest is unlisted", "[network_policy]") {
    DomainPolicy policy({"*.example.com", "example.com", "mirror.local:8080"},
                        {"secret.example.com", "example.com:22"});
    CHECK(policy.check("www.example.com", 443) == DomainVerdict::allowed);
    CHECK(policy.check("secret.example.com", 443) == DomainVerdict::denied);
    CHECK(policy.check("Secret.Example.com.", 443) == DomainVerdict::denied);
    CHECK(policy.check("example.com", 443) == DomainVerdict::allowed);
    CHECK(policy.check("example.com", 22) == DomainVerdict::denied);
    CHECK(policy.check("mirror.local", 8080) == DomainVerdict::allowed);
    CHECK(policy.check("mirror.local", 80) == DomainVerdict::unlisted);
    CHECK(policy.check("github.com", 443) == DomainVerdict::unlisted);
    CHECK(DomainPolicy().check("example.com", 443) == DomainVerdict::unlisted);
}

TEST_CASE("A pattern covers another when it matches everything the other does",
          "[network_policy]") {
    struct Case {
        const char* outer;
        const char* inner;
        bool covers;
    };
    const Case cases[] = {
        {"example.com", "example.com", true},
        {"example.com", "Example.COM.", true},
        {"example.com", "example.com:443", true},
        {"example.com:443", "example.com", false},
        {"example.com:443", "example.com:443", true},
        {"example.com:443", "example.com:80", false},
        {"example.com", "www.example.com", false},
        {"example.com", "*.example.com", false},
        {"*.example.com", "www.example.com", true},
        {"*.example.com", "a.b.example.com:8080", true},
        {"*.example.com", "*.b.example.com", true},
        {"*.example.com", "*.example.com", true},
        {"*.example.com", "example.com", false},
        {"*.example.com", "badexample.com", false},
        {"*.example.com", "*.com", false},
        {"*.example.com:443", "www.example.com", false},
    };
    for (const Case& c : cases) {
        INFO(c.outer << " covers " << c.inner);
        auto outer = parse_domain_pattern(c.outer);
        auto inner = parse_domain_pattern(c.inner);
        REQUIRE(outer);
        REQUIRE(inner);
        CHECK(outer->covers(*inner) == c.covers);
    }
}

TEST_CASE("Outside a machine policy's bound, a destination is denied, never asked about",
          "[network_policy]") {
    DomainPolicy policy({"deb.debian.org"}, {"bad.debian.org"}, {{"*.debian.org", "pypi.org"}});
    CHECK(policy.check("deb.debian.org", 443) == DomainVerdict::allowed);
    CHECK(policy.check("ftp.debian.org", 443) == DomainVerdict::unlisted);
    CHECK(policy.check("pypi.org", 443) == DomainVerdict::unlisted);
    CHECK(policy.check("bad.debian.org", 443) == DomainVerdict::denied);
    CHECK(policy.check("github.com", 443) == DomainVerdict::denied);
    CHECK(DomainPolicy({}, {}, std::vector<std::string>{}).check("pypi.org", 443) ==
          DomainVerdict::denied);
}

TEST_CASE("Ports parse only in range", "[network_policy]") {
    CHECK(parse_port_number("1") == 1);
    CHECK(parse_port_number("65535") == 65535);
    CHECK_FALSE(parse_port_number("0"));
    CHECK_FALSE(parse_port_number("65536"));
    CHECK_FALSE(parse_port_number("-1"));
    CHECK_FALSE(parse_port_number("80x"));
    CHECK_FALSE(parse_port_number(""));
}
