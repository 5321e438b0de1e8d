#include "pty/output_capture.h"

#include <catch2/catch.hpp>

#include "pty/vterm_screen.h"

using namespace caretz;
using Catch::Matchers::Contains;

namespace {

std::string captured(std::string_view bytes, size_t head = 1024, size_t tail = 1024) {
    OutputCapture capture(80, head, tail);
    capture.append(bytes);
    return capture.text();
}

// A terminal with ONLCR, as a PTY has: every newline starts at the left.
std::string through_vterm(std::string_view bytes) {
    std::string with_cr;
    for (char c : bytes) with_cr += c == '\n' ? std::string("\r\n") : std::string(1, c);
    VtermScreen screen(24, 80, 1 << 20);
    screen.feed(with_cr);
    return screen.text();
}

}  // namespace

TEST_CASE("plain text comes back as libvterm would render it") {
    for (const char* text : {"hello\n", "a\nb\n", "trailing   \nspaces\n", "no newline", "x\n\n\n",
                             "", "\n", "one\n\ntwo\n"}) {
        INFO(text);
        std::string expected = through_vterm(text);
        if (!expected.empty() && expected.back() != '\n') expected += '\n';
        CHECK(captured(text) == expected);
    }
}

TEST_CASE("output from a pipe (bare newlines) is not drawn as a staircase") {
    CHECK(captured("\x1b[1mone\x1b[0m\n  two\nthree\n") == "one\n  two\nthree\n");
}

TEST_CASE("escape sequences and carriage returns are interpreted") {
    CHECK(captured("a\x1b[31mred\x1b[0m\n") == "ared\n");
    CHECK(captured("10%\r50%\r100%\n") == "100%\n");
    CHECK(captured("tab\there\n") == through_vterm("tab\there\n"));
}

TEST_CASE("huge output keeps a bounded head and tail and says what was left out") {
    OutputCapture capture(80, 100, 100);
    std::string line(49, 'x');
    line += '\n';
    capture.append("first line\n");
    for (int i = 0; i < 10000; ++i) capture.append(line);
    capture.append("last line\n");
    std::string text = capture.text();
    CHECK(capture.total_bytes() == 11 + 10000 * 50 + 10);
    CHECK_THAT(text, Contains("first line"));
    CHECK_THAT(text, Contains("last line"));
    CHECK_THAT(text, Contains("bytes of output omitted"));
    CHECK(text.size() < 400);
}
