#include "escalation/output_lines.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using caretz::OutputLines;

namespace {

// Feeds the chunks in order and returns the lines, the final partial line included.
std::vector<std::string> render(const std::vector<std::string>& chunks) {
    std::vector<std::string> lines;
    OutputLines output([&lines](std::string_view line) { lines.emplace_back(line); });
    for (const auto& chunk : chunks) output.feed(chunk);
    output.finish();
    return lines;
}

std::vector<std::string> render(const std::string& text) {
    return render(std::vector<std::string>{text});
}

// Every way of cutting text in two must render the same.
void require_split_invariant(const std::string& text, const std::vector<std::string>& expected) {
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        INFO("cut at " << cut);
        REQUIRE(render({text.substr(0, cut), text.substr(cut)}) == expected);
    }
}

using Lines = std::vector<std::string>;

}  // namespace

TEST_CASE("OutputLines splits plain text into lines", "[output_lines]") {
    CHECK(render("one\ntwo\n") == Lines{"one", "two"});
    CHECK(render("one\n\nthree") == Lines{"one", "", "three"});
    CHECK(render("").empty());
    CHECK(render("tab\there\n") == Lines{"tab\there"});
}

TEST_CASE("OutputLines treats \\r\\n as one line end", "[output_lines]") {
    CHECK(render("touch: cannot touch '/etc/x': Read-only file system\r\nnext\r\n") ==
          Lines{"touch: cannot touch '/etc/x': Read-only file system", "next"});
}

TEST_CASE("OutputLines keeps the final text of \\r progress bars", "[output_lines]") {
    CHECK(render("  10%\r  55%\r 100% done\n") == Lines{" 100% done"});
    // Without an erase, a shorter redraw leaves the tail, as on a terminal.
    CHECK(render("downloading\rok\n") == Lines{"okwnloading"});
    CHECK(render("downloading\r\x1b[Kok\n") == Lines{"ok"});
    CHECK(render("downloading\r\x1b[2Kok\n") == Lines{"ok"});
    CHECK(render("progress 3/10\x1b[1G\x1b[0Kerror: x\n") == Lines{"error: x"});
}

TEST_CASE("OutputLines applies backspace", "[output_lines]") {
    CHECK(render("abc\b\bXY\n") == Lines{"aXY"});
    CHECK(render("\b\bstart\n") == Lines{"start"});
    // man-page style overstrike bold renders as the plain word
    CHECK(render("s\bsu\bud\bdo\bo\n") == Lines{"sudo"});
}

TEST_CASE("OutputLines drops colours and other CSI sequences", "[output_lines]") {
    CHECK(render("\x1b[1;31merror:\x1b[0m \x1b[1m/etc/x\x1b[m: Read-only file system\n") ==
          Lines{"error: /etc/x: Read-only file system"});
    CHECK(render("\x1b[?25lhidden cursor\x1b[?25h\n") == Lines{"hidden cursor"});
    CHECK(render("\x1b[38;5;196mred\x1b[39m\n") == Lines{"red"});
}

TEST_CASE("OutputLines moves along the line for cursor sequences", "[output_lines]") {
    CHECK(render("a\x1b[3Cb\n") == Lines{"a   b"});
    CHECK(render("abcdef\x1b[3DX\n") == Lines{"abcXef"});
    CHECK(render("abcdef\x1b[2GX\n") == Lines{"aXcdef"});
    CHECK(render("abcdef\x1b[1;3HX\n") == Lines{"abcdefX"});  // rows are not tracked
}

TEST_CASE("OutputLines drops OSC strings ended by BEL or ST", "[output_lines]") {
    CHECK(render("\x1b]0;window title\x07visible\n") == Lines{"visible"});
    CHECK(render("\x1b]133;D;1\x1b\\after\n") == Lines{"after"});
    CHECK(render("\x1b]8;;file:///etc/x\x1b\\/etc/x\x1b]8;;\x1b\\: Read-only file system\n") ==
          Lines{"/etc/x: Read-only file system"});
    // a newline inside an OSC belongs to the string, as on a terminal
    CHECK(render("\x1b]0;a\nb\x07"
                 "c\n") == Lines{"c"});
}

TEST_CASE("OutputLines drops DCS, APC, PM and SOS strings", "[output_lines]") {
    CHECK(render("\x1bPq#0;2;0;0;0\x1b\\text\n") == Lines{"text"});
    CHECK(render("\x1b_Gf=100;AAAA\x1b\\text\n") == Lines{"text"});
    CHECK(render("\x1b^private\x1b\\text\n") == Lines{"text"});
    CHECK(render("\x1bXstring\x1b\\text\n") == Lines{"text"});
}

TEST_CASE("OutputLines drops two- and three-byte escape sequences", "[output_lines]") {
    CHECK(render("\x1b(Bplain\x1b)0\x1b=\x1b>\x1b"
                 "7\x1b"
                 "8\x1b"
                 "c\n") == Lines{"plain"});
    CHECK(render("a\x1b\x1b[31mb\n") == Lines{"ab"});
}

TEST_CASE("OutputLines still ends a line when a newline interrupts a sequence", "[output_lines]") {
    CHECK(render("one\x1b\ntwo\n") == Lines{"one", "two"});
    CHECK(render("one\x1b[3\ntwo\n") == Lines{"one", "two"});
    CHECK(render("one\x1b(\ntwo\n") == Lines{"one", "two"});
}

TEST_CASE("OutputLines handles sequences split across feeds", "[output_lines]") {
    require_split_invariant("\x1b[1;31merr\x1b[0m: x\r\n", Lines{"err: x"});
    require_split_invariant("\x1b]0;title\x1b\\ok\n", Lines{"ok"});
    require_split_invariant("\x1b]0;title\x07ok\n", Lines{"ok"});
    require_split_invariant("\x1bP1$r\x1b\\ok\n", Lines{"ok"});
    require_split_invariant("50%\r\x1b[Kdone\n", Lines{"done"});
    require_split_invariant(
        "mkdir: cannot create directory \xe2\x80\x98/etc/foo\xe2\x80\x99\n",
        Lines{"mkdir: cannot create directory \xe2\x80\x98/etc/foo\xe2\x80\x99"});
}

TEST_CASE("OutputLines handles every byte fed alone", "[output_lines]") {
    const std::string text = "\x1b[32m  1%\r\x1b[K\x1b[32m100%\x1b[0m\r\nsudo: no\x1b]2;t\x07!\n";
    std::vector<std::string> bytes;
    for (const char c : text) bytes.emplace_back(1, c);
    CHECK(render(bytes) == Lines{"100%", "sudo: no!"});
}

TEST_CASE("OutputLines keeps the first 64 KiB of a huge line", "[output_lines]") {
    const std::string huge(200 * 1024, 'x');
    const auto lines = render({huge, "TAIL\nnext\n"});
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == std::string(OutputLines::kMaxLineBytes, 'x'));
    CHECK(lines[1] == "next");
}

TEST_CASE("OutputLines delivers a final line without newline only once", "[output_lines]") {
    std::vector<std::string> lines;
    OutputLines output([&lines](std::string_view line) { lines.emplace_back(line); });
    output.feed("partial");
    output.finish();
    output.finish();
    CHECK(lines == Lines{"partial"});
}

TEST_CASE("OutputLines finds a control byte at every place in a long run of text",
          "[output_lines]") {
    // Long runs are scanned eight bytes at a time: a newline, a carriage return, an escape,
    // DEL or a tab must act wherever it falls in the word, and bytes of UTF-8 are shown.
    const std::string text = "abcdefghijklmnopqrstuvwx\xc3\xa9yz0123456789";
    for (std::size_t at = 0; at <= text.size(); ++at) {
        INFO("at " << at);
        const std::string head = text.substr(0, at), tail = text.substr(at);
        CHECK(render(head + "\n" + tail + "\n") == Lines{head, tail});
        CHECK(render(head + "\r" + tail + "\n") ==
              Lines{tail + (tail.size() < head.size() ? head.substr(tail.size()) : "")});
        CHECK(render(head + "\x1b[31m" + tail + "\n") == Lines{head + tail});
        CHECK(render(head + "\x7f" + tail + "\n") == Lines{head + tail});
        CHECK(render(head + "\t" + tail + "\n") == Lines{head + "\t" + tail});
    }
}
