#include "agent/turn_view.h"

#include <catch2/catch.hpp>
#include <string>

using namespace caretz;

TEST_CASE("terminal text: escape sequences from the model are shown, not sent", "[view]") {
    TerminalTextFilter f;
    CHECK(f.feed("plain text\n\tindented") == "plain text\n\tindented");
    CHECK(f.feed("\x1b]0;pwned\x07") == "^[]0;pwned^G");
    CHECK(f.feed("a\rb\x7f") == "a^Mb^?");
    CHECK(f.feed("\xC2\x9B"
                 "31m") == "\\u009b31m");  // C1 CSI
    CHECK(f.feed("caf\xC3\xA9 \xE2\x9C\x93") == "caf\xC3\xA9 \xE2\x9C\x93");
}

TEST_CASE("terminal text: bytes that are not UTF-8 are shown, not sent", "[view]") {
    TerminalTextFilter f;
    CHECK(f.feed("\x9b"
                 "31m") == "\\x9b31m");  // an 8-bit CSI
    CHECK(f.feed("\xC0\x9B"
                 "2J") == "\\xc0\\x9b2J");  // overlong
    CHECK(f.feed("\xE2\x9C(") == "\\xe2\\x9c(");
    CHECK(f.feed("\xFF") == "\\xff");
}

TEST_CASE("terminal text: a UTF-8 character cut between chunks comes out whole", "[view]") {
    const std::string text = "\xE2\x9C\x93 ok \xF0\x9F\x98\x80";
    for (size_t at = 0; at <= text.size(); ++at) {
        TerminalTextFilter f;
        std::string out = f.feed(text.substr(0, at));
        out += f.feed(text.substr(at));
        CHECK(out == text);
    }
}
