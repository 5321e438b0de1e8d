#include "pty/utf8.h"

#include <catch2/catch.hpp>
#include <string>

using namespace caretz;

TEST_CASE("decode_utf8 takes whole characters and rejects every malformed byte", "[utf8]") {
    struct Case {
        const char* bytes;
        char32_t code_point;
        size_t length;
        bool valid;
    };
    const Case cases[] = {
        {"a", U'a', 1, true},
        {"\xC3\xA9", 0xE9, 2, true},
        {"\xE6\x97\xA5", 0x65E5, 3, true},
        {"\xF0\x9F\x98\x80", 0x1F600, 4, true},
        {"\xF3\xA0\x80\x81", 0xE0001, 4, true},
        {"\xF4\x8F\xBF\xBF", 0x10FFFF, 4, true},
        {"\x80", 0xFFFD, 1, false},              // a stray continuation byte
        {"\xC3", 0xFFFD, 1, false},              // cut off
        {"\xE6\x97", 0xFFFD, 1, false},          // cut off
        {"\xC3(", 0xFFFD, 1, false},             // a missing continuation byte
        {"\xC0\x9B", 0xFFFD, 1, false},          // overlong ESC [ (CSI) in disguise
        {"\xE0\x80\x9B", 0xFFFD, 1, false},      // overlong
        {"\xF0\x80\x80\x9B", 0xFFFD, 1, false},  // overlong
        {"\xED\xA0\x80", 0xFFFD, 1, false},      // a surrogate
        {"\xF4\x90\x80\x80", 0xFFFD, 1, false},  // past U+10FFFF
        {"\xF5\x80\x80\x80", 0xFFFD, 1, false},
        {"\xFF", 0xFFFD, 1, false},
    };
    for (const auto& c : cases) {
        INFO(c.bytes);
        const Utf8Char decoded = decode_utf8(c.bytes, 0);
        CHECK(decoded.code_point == c.code_point);
        CHECK(decoded.length == c.length);
        CHECK(decoded.valid == c.valid);
    }
    const std::string with_nul("a\0b", 3);
    CHECK(decode_utf8(with_nul, 1).valid);
    CHECK(decode_utf8(with_nul, 1).code_point == 0);
}

TEST_CASE("utf8_incomplete_tail: the start of a character that more bytes can complete", "[utf8]") {
    struct Case {
        const char* text;
        size_t tail;
    };
    const Case cases[] = {
        {"", 0},
        {"abc", 0},
        {"ab\xC3", 1},
        {"ab\xC3\xA9", 0},
        {"\xE6", 1},
        {"\xE6\x97", 2},
        {"\xE6\x97\xA5", 0},
        {"\xF0\x9F\x98", 3},
        {"\xF0\x9F\x98\x80", 0},
        {"\x80\x80\x80", 0},  // nothing could complete stray continuation bytes
        {"a\xFF", 0},
        {"\xC3\xA9\x80", 0},
    };
    for (const auto& c : cases) {
        INFO(c.text);
        CHECK(utf8_incomplete_tail(c.text) == c.tail);
    }
}

TEST_CASE("valid_utf8 replaces each malformed byte with U+FFFD", "[utf8]") {
    CHECK(valid_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
    CHECK(valid_utf8("a\xC0\x9B"
                     "b") ==
          "a\xEF\xBF\xBD\xEF\xBF\xBD"
          "b");
    CHECK(valid_utf8("\xE6\x97") == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("display_width: combining marks take none, wide characters two", "[utf8]") {
    CHECK(display_width(U'a') == 1);
    CHECK(display_width(0xE9) == 1);
    CHECK(display_width(0x0301) == 0);
    CHECK(display_width(0x65E5) == 2);
    CHECK(display_width(0x1F600) == 2);
    CHECK(display_width(0xFF21) == 2);
}

TEST_CASE("needs_visible_escape: by Unicode property, not by a list", "[utf8]") {
    const char32_t escaped[] = {
        0x00,   0x1B,     0x7F,     0x85,    0x9B,  // Cc
        0xAD,   0x061C,   0x180E,   0x200B,  0x200D,  0x200E,  0x202E,
        0x2066, 0x2069,   0xFEFF,   0xE0001, 0xE0020, 0xE007F, 0x1D173,  // Cf, tags included
        0xE000, 0xF0000,  0x10FFFD,                                      // Co
        0xD800, 0xDFFF,                                                  // Cs
        0x0378, 0xFFFE,   0x10FFFF, 0x2065,                              // Cn
        0x2028, 0x2029,                                                  // Zl, Zp
        0xA0,   0x1680,   0x2000,   0x2007,  0x202F,  0x3000,            // spaces other than U+0020
        0x115F, 0x1160,   0x3164,   0xFFA0,                              // Hangul fillers
        0x034F, 0x17B4,   0x180B,   0xFE0F,  0xE0100,                    // other default-ignorables
        0x2800, 0x1D159,  0x16FE4,                                       // drawn blank
        0xFFFD, 0x110000,
    };
    for (char32_t c : escaped) {
        INFO(std::hex << static_cast<unsigned>(c));
        CHECK(needs_visible_escape(c));
    }
    const char32_t shown[] = {U' ',   U'a',   U'~',   0xE9,   0x0301,  0x0430, 0x0627,
                              0x05D0, 0x65E5, 0xAC00, 0x2713, 0x1F600, 0x2801, 0x1F3FB};
    for (char32_t c : shown) {
        INFO(std::hex << static_cast<unsigned>(c));
        CHECK_FALSE(needs_visible_escape(c));
    }
}

TEST_CASE("code_point_escape: four hex digits, or eight past U+FFFF", "[utf8]") {
    CHECK(code_point_escape(0x85) == "\\u0085");
    CHECK(code_point_escape(0x202E) == "\\u202e");
    CHECK(code_point_escape(0xE0001) == "\\U000e0001");
    CHECK(code_point_escape(0x10FFFF) == "\\U0010ffff");
}
