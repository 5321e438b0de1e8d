#include "pty/escape_splitter.h"

#include <catch2/catch.hpp>
#include <string>

namespace {

// "T(text)" for text, "C(bytes)" for a control run, "M(bytes)" for one that may change row;
// control bytes are shown escaped.
std::string describe(caretz::EscapeSplitter& splitter, std::string_view input) {
    std::string out;
    for (const auto& segment : splitter.split(input)) {
        out += segment.text ? "T(" : segment.may_change_row ? "M(" : "C(";
        for (char c : segment.bytes) {
            if (static_cast<unsigned char>(c) < 0x20) {
                out += "^" + std::to_string(static_cast<unsigned char>(c));
            } else {
                out += c;
            }
        }
        out += ")";
    }
    return out;
}

std::string describe(std::string_view input) {
    caretz::EscapeSplitter splitter;
    return describe(splitter, input);
}

}  // namespace

TEST_CASE("text and newlines", "[escape_splitter]") {
    CHECK(describe("abc") == "T(abc)");
    CHECK(describe("ab\r\ncd") == "T(ab)M(^13^10)T(cd)");
    CHECK(describe("héllo 日本") == "T(héllo 日本)");
}

TEST_CASE("controls that stay on the row", "[escape_splitter]") {
    CHECK(describe("a\rb") == "T(a)C(^13)T(b)");
    CHECK(describe("a\bb\tc\a") == "T(a)C(^8)T(b)C(^9)T(c)C(^7)");
    CHECK(describe("\x1b[1;31mred\x1b[0m") == "C(^27[1;31m)T(red)C(^27[0m)");
    CHECK(describe("\x1b]8;;http://x\x1b\\link") == "C(^27]8;;http://x^27\\)T(link)");
    CHECK(describe("\x1b]0;title\x07t") == "C(^27]0;title^7)T(t)");
    CHECK(describe("\x1b[?25l\x1b[?2004h") == "C(^27[?25l^27[?2004h)");
    CHECK(describe("\x1b(Bx") == "C(^27(B)T(x)");
    CHECK(describe("\x1b"
                   "7x") == "C(^277)T(x)");
}

TEST_CASE("controls that may change the row", "[escape_splitter]") {
    CHECK(describe("\x1b[2;5Hx") == "M(^27[2;5H)T(x)");
    CHECK(describe("\x1b[Kx") == "M(^27[K)T(x)");
    CHECK(describe("\x1b[?1049h") == "M(^27[?1049h)");
    CHECK(describe("\x1b"
                   "Dx") == "M(^27D)T(x)");
    CHECK(describe("\x1b"
                   "8x") == "M(^278)T(x)");
    CHECK(describe("\x1b#8") == "M(^27#8)");
    CHECK(describe("\x1b]0;a\nb\x07") == "M(^27]0;a^10b^7)");
}

TEST_CASE("sequences split across calls", "[escape_splitter]") {
    caretz::EscapeSplitter splitter;
    CHECK(describe(splitter, "ab\x1b[3") == "T(ab)C(^27[3)");
    CHECK(describe(splitter, "1mcd") == "C(1m)T(cd)");
    CHECK(describe(splitter, "\x1b[1") == "C(^27[1)");
    CHECK(describe(splitter, "0Bz") == "M(0B)T(z)");
    CHECK(describe(splitter, "\x1b]0;ti") == "C(^27]0;ti)");
    CHECK(describe(splitter, "tle\x07x") == "C(tle^7)T(x)");
}

TEST_CASE("CAN aborts a sequence and an invalid CSI byte ends it", "[escape_splitter]") {
    CHECK(describe("\x1b[12\x18x") == "C(^27[12^24)T(x)");
    CHECK(describe("\x1b[12\xc3x") == "C(^27[12\xc3)T(x)");
}
