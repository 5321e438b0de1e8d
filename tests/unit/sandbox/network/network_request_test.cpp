#include "sandbox/network/network_request.h"

#include <catch2/catch.hpp>

using namespace caretz;

TEST_CASE("CONNECT names the destination of a tunnel", "[network_request]") {
    struct Case {
        const char* head;
        const char* host;
        uint16_t port;
    };
    const Case cases[] = {
        {"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n", "pypi.org", 443},
        {"CONNECT Registry.NPMJS.org:8443 HTTP/1.0\r\n\r\n", "registry.npmjs.org", 8443},
        {"CONNECT [::1]:443 HTTP/1.1\r\n\r\n", "::1", 443},
    };
    for (const auto& c : cases) {
        INFO(c.head);
        auto r = parse_proxy_request(c.head);
        REQUIRE(r);
        CHECK(r->tunnel);
        CHECK(r->host == c.host);
        CHECK(r->port == c.port);
        CHECK(r->upstream_head.empty());
    }
}

TEST_CASE("A plain request goes upstream in origin form, closing after one answer",
          "[network_request]") {
    auto r = parse_proxy_request(
        "GET http://deb.debian.org/debian/dists/bookworm/Release?x=1#frag HTTP/1.1\r\n"
        "Host: deb.debian.org\r\n"
        "User-Agent: apt\r\n"
        "Proxy-Connection: keep-alive\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\n"
        "Connection: keep-alive\r\n"
        "Keep-Alive: 300\r\n\r\n");
    REQUIRE(r);
    CHECK_FALSE(r->tunnel);
    CHECK(r->host == "deb.debian.org");
    CHECK(r->port == 80);
    CHECK(r->upstream_head ==
          "GET /debian/dists/bookworm/Release?x=1 HTTP/1.1\r\n"
          "Host: deb.debian.org\r\n"
          "User-Agent: apt\r\n"
          "Connection: close\r\n\r\n");
}

TEST_CASE("Plain requests: ports, bare hosts, a missing Host header", "[network_request]") {
    auto r =
        parse_proxy_request("POST http://127.0.0.1:8080 HTTP/1.0\r\nContent-Length: 2\r\n\r\n");
    REQUIRE(r);
    CHECK(r->host == "127.0.0.1");
    CHECK(r->port == 8080);
    CHECK(r->upstream_head ==
          "POST / HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nContent-Length: 2\r\nConnection: "
          "close\r\n\r\n");
    r = parse_proxy_request("GET HTTP://Example.com?q HTTP/1.1\r\nHost: example.com\r\n\r\n");
    REQUIRE(r);
    CHECK(r->host == "example.com");
    CHECK(r->upstream_head.starts_with("GET /?q HTTP/1.1\r\n"));
}

TEST_CASE("The server gets the host that was judged, whatever Host the client sent",
          "[network_request]") {
    struct Case {
        const char* head;
        const char* host;  // judged
        const char* forwarded;
    };
    const Case cases[] = {
        {"GET http://allowed.example/ HTTP/1.1\r\nHost: other.example\r\n\r\n", "allowed.example",
         "GET / HTTP/1.1\r\nHost: allowed.example\r\nConnection: close\r\n\r\n"},
        // Two Host headers, in any spelling: neither goes on.
        {"GET http://allowed.example/x HTTP/1.1\r\nhost: allowed.example\r\nHOST: other.example\r\n"
         "Accept: */*\r\n\r\n",
         "allowed.example",
         "GET /x HTTP/1.1\r\nHost: allowed.example\r\nAccept: */*\r\nConnection: close\r\n\r\n"},
        // The judged form: lower case, no trailing dot, the port only when it is not 80.
        {"GET http://Allowed.Example.:8080/ HTTP/1.1\r\nHost: Allowed.Example.:8080\r\n\r\n",
         "allowed.example",
         "GET / HTTP/1.1\r\nHost: allowed.example:8080\r\nConnection: close\r\n\r\n"},
        {"GET http://allowed.example:80/ HTTP/1.1\r\nHost: allowed.example:8080\r\n\r\n",
         "allowed.example", "GET / HTTP/1.1\r\nHost: allowed.example\r\nConnection: close\r\n\r\n"},
        {"GET http://[::1]:8080/ HTTP/1.1\r\nHost: other.example\r\n\r\n", "::1",
         "GET / HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n"},
        {"GET http://[::1]/ HTTP/1.1\r\n\r\n", "::1",
         "GET / HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n"},
        // A header value may hold a tab and bytes above ASCII.
        {"GET http://a.example/ HTTP/1.1\r\nX-Note: \tcaf\xc3\xa9\r\n\r\n", "a.example",
         "GET / HTTP/1.1\r\nHost: a.example\r\nX-Note: \tcaf\xc3\xa9\r\nConnection: close\r\n\r\n"},
    };
    for (const auto& c : cases) {
        INFO(c.head);
        auto r = parse_proxy_request(c.head);
        REQUIRE(r);
        CHECK(r->host == c.host);
        CHECK(r->upstream_head == c.forwarded);
    }
}

TEST_CASE("Heads that could smuggle another host past the proxy are refused", "[network_request]") {
    const std::string heads[] = {
        // A bare LF or CR ends a line for some servers: a second Host the proxy never saw.
        "GET http://allowed.example/ HTTP/1.1\r\nX-A: b\nHost: other.example\r\n\r\n",
        "GET http://allowed.example/ HTTP/1.1\r\nX-A: b\rHost: other.example\r\n\r\n",
        "GET http://allowed.example/ HTTP/1.1\nHost: other.example\nX: HTTP/1.1\r\n\r\n",
        // A header name that is no token, which a lenient server may still read as Host.
        "GET http://allowed.example/ HTTP/1.1\r\nHost : other.example\r\n\r\n",
        "GET http://allowed.example/ HTTP/1.1\r\n Host: other.example\r\n\r\n",
        // A folded line continues the header before it.
        "GET http://allowed.example/ HTTP/1.1\r\nX-A: b\r\n other.example\r\n\r\n",
        "GET http://allowed.example/ HTTP/1.1\r\nX-A: b\r\n\tother.example\r\n\r\n",
        // Other control bytes.
        "GET http://allowed.example/ HTTP/1.1\r\nX-A: \x01\r\n\r\n",
        "GET http://allowed.example/ HTTP/1.1\r\nX-A: \x7f\r\n\r\n",
        // A target with a space or a tab would end the request line early upstream.
        "GET http://allowed.example/ x HTTP/1.1\r\n\r\n",
        "GET http://allowed.example/\tx HTTP/1.1\r\n\r\n",
        "G T http://allowed.example/ HTTP/1.1\r\n\r\n",
        "GET http://allowed.example/ HTTP/1.10\r\n\r\n",
    };
    for (const auto& head : heads) {
        INFO(head);
        CHECK_FALSE(parse_proxy_request(head));
    }
}

TEST_CASE("Requests the proxy does not take", "[network_request]") {
    for (const char* head : {
             "GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n",  // not meant for a proxy
             "GET https://example.com/ HTTP/1.1\r\n\r\n",              // TLS goes through CONNECT
             "GET ftp://example.com/ HTTP/1.1\r\n\r\n",
             "CONNECT example.com HTTP/1.1\r\n\r\n",  // a tunnel needs a port
             "CONNECT example.com:0 HTTP/1.1\r\n\r\n",
             "CONNECT example.com:99999 HTTP/1.1\r\n\r\n",
             "GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",
             "GET http://example.com/ SPDY/3\r\n\r\n",
             "GET\r\n\r\n",
             "",
         }) {
        INFO(head);
        CHECK_FALSE(parse_proxy_request(head));
    }
}

TEST_CASE("The host judged is the host resolved: no byte that could part them",
          "[network_request]") {
    using namespace std::string_literals;
    const std::string heads[] = {
        // A NUL ends the name that is resolved, so the policy would judge one host (this one
        // passes "*.allowed.example") and the proxy connect to another (127.0.0.1).
        "GET http://127.0.0.1\0.allowed.example/ HTTP/1.1\r\n\r\n"s,
        "CONNECT 127.0.0.1\0.allowed.example:443 HTTP/1.1\r\n\r\n"s,
        "CONNECT internal%2eexample:443 HTTP/1.1\r\n\r\n",
        "CONNECT [::1%25eth0]:443 HTTP/1.1\r\n\r\n",
        "CONNECT [::g]:443 HTTP/1.1\r\n\r\n",
        "CONNECT .example:443 HTTP/1.1\r\n\r\n",
        "GET http://ex\xc3\xa4mple.com/ HTTP/1.1\r\n\r\n",
    };
    for (const auto& head : heads) {
        INFO(head);
        CHECK_FALSE(parse_proxy_request(head));
    }
}

TEST_CASE("The head ends at the first blank line", "[network_request]") {
    CHECK(request_head_end("GET http://a/ HTTP/1.1\r\nHost: a\r\n") == 0);
    CHECK(request_head_end("GET http://a/ HTTP/1.1\r\n\r\nbody") == 26);
}

TEST_CASE("The 403 names the host and what would let it through", "[network_request]") {
    std::string unlisted = blocked_response("pypi.org", 443, false);
    CHECK(unlisted.starts_with("HTTP/1.1 403 Forbidden\r\n"));
    CHECK(unlisted.find("Blocked by Caretz's network policy: pypi.org:443") != std::string::npos);
    CHECK(unlisted.find("add \"pypi.org\" to \"sandbox.allowed_domains\"") != std::string::npos);
    std::string denied = blocked_response("pypi.org", 443, true);
    CHECK(denied.find("sandbox.denied_domains") != std::string::npos);
    auto body = unlisted.substr(unlisted.find("\r\n\r\n") + 4);
    CHECK(unlisted.find("Content-Length: " + std::to_string(body.size()) + "\r\n") !=
          std::string::npos);
}
