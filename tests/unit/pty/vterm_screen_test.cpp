#include "pty/vterm_screen.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

std::string render(std::string_view output, int rows = 5, int cols = 20, size_t scrollback = 100) {
    caretz::VtermScreen screen(rows, cols, scrollback);
    screen.feed(output);
    return screen.text();
}

std::string render_bytewise(std::string_view output, int rows = 5, int cols = 20) {
    caretz::VtermScreen screen(rows, cols, 100);
    for (char c : output) screen.feed(std::string_view(&c, 1));
    return screen.text();
}

}  // namespace

TEST_CASE("plain lines, trailing spaces trimmed, trailing empty lines dropped", "[vterm]") {
    CHECK(render("") == "");
    CHECK(render("hello   \r\nworld\r\n\r\n") == "hello\nworld\n");
    CHECK(render("a\r\n\r\nb") == "a\n\nb\n");
}

TEST_CASE("carriage-return progress bars collapse to their last state", "[vterm]") {
    CHECK(render("10%\r50%\r100% done\r\n") == "100% done\n");
    CHECK(render("downloading ....\r\x1b[Kok\r\n") == "ok\n");
}

TEST_CASE("colours and attributes are dropped", "[vterm]") {
    CHECK(render("\x1b[1;31merror:\x1b[0m \x1b[38;5;208mbad\x1b[m\r\n") == "error: bad\n");
}

TEST_CASE("cursor movement is applied", "[vterm]") {
    CHECK(render("abc\x1b[2Dx\r\n") == "axc\n");
    CHECK(render("line1\r\nline2\x1b[1A\rLINE\r\n\r\n") == "LINE1\nline2\n");
    CHECK(render("\x1b[3;5Hmid") == "\n\n    mid\n");
    CHECK(render("gone\x1b[2J\x1b[Hfresh") == "fresh\n");
}

TEST_CASE("wide characters appear once", "[vterm]") {
    CHECK(render("日本語 ok\r\n") == "日本語 ok\n");
    CHECK(render("a😀b\r\n") == "a😀b\n");
    CHECK(render("e\xcc\x81!\r\n") == "e\xcc\x81!\n");
}

TEST_CASE("the alternate screen is left behind when a program exits it", "[vterm]") {
    std::string before = "before\r\n";
    std::string full_screen = "\x1b[?1049h\x1b[H\x1b[2Jeditor contents\x1b[5;1Hstatus";
    CHECK(render(before + full_screen) == "editor contents\n\n\n\nstatus\n");
    CHECK(render(before + full_screen + "\x1b[?1049l" + "after\r\n") == "before\nafter\n");
}

TEST_CASE("scrollback keeps lines beyond the screen height, bounded", "[vterm]") {
    std::string output;
    std::string expected;
    for (int i = 1; i <= 12; ++i) {
        output += "line " + std::to_string(i) + "\r\n";
        expected += "line " + std::to_string(i) + "\n";
    }
    CHECK(render(output, 3, 20) == expected);
    CHECK(render(output, 3, 20, 4) == "line 7\nline 8\nline 9\nline 10\nline 11\nline 12\n");
    CHECK(render(output, 3, 20, 0) == "line 11\nline 12\n");
}

TEST_CASE("a line longer than the width comes back as one line", "[vterm]") {
    std::string long_line = "0123456789abcdefghijKLMNOPQRSTUVWXYZ-tail";
    SECTION("on screen") {
        CHECK(render(long_line + "\r\nnext\r\n") == long_line + "\nnext\n");
    }
    SECTION("fed a byte at a time") {
        CHECK(render_bytewise(long_line + "\r\nnext\r\n") == long_line + "\nnext\n");
    }
    SECTION("scrolled into the scrollback") {
        std::string output = long_line + "\r\n";
        for (int i = 0; i < 8; ++i) output += "filler\r\n";
        std::string text = render(output, 3, 20);
        CHECK(text.substr(0, long_line.size() + 1) == long_line + "\n");
    }
    SECTION("wrapping at the bottom row") {
        std::string output = "a\r\nb\r\nc\r\nd\r\n" + long_line;
        CHECK(render(output, 5, 20) == "a\nb\nc\nd\n" + long_line + "\n");
    }
    SECTION("with colours at the wrap point") {
        std::string output = "0123456789abcdefghij\x1b[31mKLMN\x1b[0m\r\n";
        CHECK(render(output) == "0123456789abcdefghijKLMN\n");
    }
    SECTION("a wide character that does not fit moves whole to the next row") {
        std::string output = "0123456789abcdefghi日本\r\n";
        CHECK(render(output) == "0123456789abcdefghi日本\n");
    }
    SECTION("spaces at the wrap point are kept") {
        std::string output = "0123456789abcdefghi word\r\n";
        CHECK(render(output) == "0123456789abcdefghi word\n");
    }
}

TEST_CASE("a line exactly as wide as the screen is not joined to the next", "[vterm]") {
    std::string exact = "0123456789abcdefghij";
    CHECK(render(exact + "\r\nnext\r\n") == exact + "\nnext\n");
    CHECK(render(exact + "\r\n" + exact + "\r\n" + exact + "\r\n", 2, 20) ==
          exact + "\n" + exact + "\n" + exact + "\n");
}

TEST_CASE("explicit cursor moves to the next row are not wraps", "[vterm]") {
    CHECK(render("0123456789abcdefghij\x1b[2;1Hnext\r\n") == "0123456789abcdefghij\nnext\n");
    CHECK(render("0123456789abcdefghij\x1b"
                 "D\rnext\r\n") == "0123456789abcdefghij\nnext\n");
}

TEST_CASE("clearing the screen ends a wrap", "[vterm]") {
    std::string output = "0123456789abcdefghijKLM\x1b[2J\x1b[Hone\r\ntwo\r\n";
    CHECK(render(output) == "one\ntwo\n");
}

TEST_CASE("the text does not depend on how the output was split into reads", "[vterm]") {
    const std::vector<std::string> tokens = {
        "word ",     "0123456789", "\r\n",   "\r",      "\x1b[31m",         "\x1b[0m",
        "日本",      "😀",          "\x1b[K", "\x1b[2A", "\x1b]0;title\x07", "\t",
        "\x1b[?25l", "e\xcc\x81"};
    std::mt19937 random(7);
    for (int round = 0; round < 200; ++round) {
        std::string output;
        for (int i = 0; i < 60; ++i) output += tokens[random() % tokens.size()];
        std::string whole = render(output, 4, 13, 50);
        caretz::VtermScreen screen(4, 13, 50);
        for (size_t pos = 0; pos < output.size();) {
            size_t piece = 1 + random() % 9;
            screen.feed(std::string_view(output).substr(pos, piece));
            pos += piece;
        }
        INFO(output);
        REQUIRE(screen.text() == whole);
    }
}

TEST_CASE("printed lines of any length come back exactly, wrapped or not", "[vterm]") {
    const std::vector<std::string> pieces = {"a", "bc", "defgh",      " ",       "日",
                                             "😀", "é",  "\x1b[1;32m", "\x1b[0m", "0123456789"};
    std::mt19937 random(11);
    for (int round = 0; round < 100; ++round) {
        std::string output;
        std::string expected;
        for (int line = 0; line < 12; ++line) {
            std::string text;
            int count = static_cast<int>(random() % 12);
            for (int i = 0; i < count; ++i) {
                const std::string& piece = pieces[random() % pieces.size()];
                output += piece;
                if (piece[0] != '\x1b') text += piece;
            }
            output += "\r\n";
            text.erase(text.find_last_not_of(' ') + 1);
            expected += text + "\n";
        }
        while (expected.size() >= 2 && expected.substr(expected.size() - 2) == "\n\n") {
            expected.pop_back();
        }
        if (expected == "\n") expected.clear();
        INFO(output);
        REQUIRE(render(output, 6, 10, 1000) == expected);
    }
}
