#include "escalation/question_notice.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "escalation/terminal_approver.h"
#include "pty/fd_io.h"
#include "tests/unit/read_to_end.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;

TEST_CASE("notice: desktop mode pushes and sets the title, rings and notifies", "[notice]") {
    const std::string start = notice_start(NotifyMode::desktop, "run it?", NoticeRoute::direct);
    CHECK(start ==
          "\x1b[22;0t\x1b]0;Caretz waits for an answer\x07"
          "\x07"
          "\x1b]9;Caretz: run it?\x07"
          "\x1b]777;notify;Caretz waits for an answer;run it?\x07");
    CHECK(notice_end(NotifyMode::desktop) == "\x1b[23;0t");
}

TEST_CASE("notice: bell mode rings and sets the title, off does nothing", "[notice]") {
    const std::string bell = notice_start(NotifyMode::bell, "run it?", NoticeRoute::direct);
    CHECK(bell == "\x1b[22;0t\x1b]0;Caretz waits for an answer\x07\x07");
    CHECK(notice_end(NotifyMode::bell) == "\x1b[23;0t");
    CHECK(notice_start(NotifyMode::off, "run it?", NoticeRoute::direct).empty());
    CHECK(notice_end(NotifyMode::off).empty());
}

TEST_CASE("notice: inside tmux the notifications pass through only where allowed", "[notice]") {
    const std::string plain = notice_start(NotifyMode::desktop, "q", NoticeRoute::tmux);
    CHECK(plain == notice_start(NotifyMode::desktop, "q", NoticeRoute::direct));
    const std::string through =
        notice_start(NotifyMode::desktop, "q", NoticeRoute::tmux_passthrough);
    // The title and the bell stay for tmux itself; each notification is wrapped, ESC doubled.
    CHECK_THAT(through, StartsWith("\x1b[22;0t\x1b]0;Caretz waits for an answer\x07\x07"));
    CHECK_THAT(through, Contains("\x1bPtmux;\x1b\x1b]9;Caretz: q\x07\x1b\\"));
    CHECK_THAT(through,
               Contains("\x1bPtmux;\x1b\x1b]777;notify;Caretz waits for an answer;q\x07\x1b\\"));
    CHECK_THAT(through, !Contains("\x07\x1b]9;"));
}

TEST_CASE("notice: the summary cannot end or inject an escape, and stays short", "[notice]") {
    // What a command printed ends up in a refusal's subject and so could reach the summary.
    const std::string hostile = "touch /x\x07\x1b]0;owned\x1b\\\n\xC2\x9C\xFF done";
    const std::string summary = question_summary(hostile);
    CHECK(summary == "touch /x\\x07\\e]0;owned\\e\\\\\\n\\u009c\\xff done");
    for (char c : summary) CHECK(static_cast<unsigned char>(c) >= 0x20);
    const std::string start = notice_start(NotifyMode::desktop, summary, NoticeRoute::direct);
    CHECK(std::count(start.begin(), start.end(), '\x1b') == 4);

    // 199 bytes, then a character of three: the cut comes before it, never inside it.
    const std::string longer = question_summary(std::string(149, 'a') + std::string(50, 'b') +
                                                "\xE6\x97\xA5\xE6\x9C\xAC" + std::string(99, 'c'));
    CHECK(longer == std::string(149, 'a') + std::string(50, 'b') + "...");
}

TEST_CASE("notice: notify modes parse from their config words", "[notice]") {
    CHECK(parse_notify_mode("desktop") == NotifyMode::desktop);
    CHECK(parse_notify_mode("bell") == NotifyMode::bell);
    CHECK(parse_notify_mode("off") == NotifyMode::off);
    CHECK_FALSE(parse_notify_mode("loud"));
    CHECK(to_string(NotifyMode::bell) == "bell");
}

TEST_CASE("notice: without $TMUX the escapes go to the terminal as they are", "[notice]") {
    CHECK(notice_route({}) == NoticeRoute::direct);
    CHECK(notice_route({{"TMUX", ""}}) == NoticeRoute::direct);
    // A $TMUX whose server cannot be asked: sent plainly, and tmux decides.
    CHECK(notice_route({{"TMUX", "/nonexistent/socket,1,0"}}) == NoticeRoute::tmux);
}

namespace {

// Waits up to ten seconds for `path` to hold a line "END".
bool wait_for_end(const std::filesystem::path& path) {
    for (int i = 0; i < 1000; ++i) {
        if (file_contents(path).find("END\n") != std::string::npos) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

}  // namespace

TEST_CASE("notice: the notify command gets the summary as its last argument and in the environment",
          "[notice]") {
    TempDir dir;
    const auto script = dir.path() / "notify";
    const auto out = dir.path() / "out";
    std::ofstream(script) << "#!/bin/sh\n"
                             "for a in \"$@\"; do printf 'arg=%s\\n' \"$a\"; done > \"$1\"\n"
                             "printf 'env=%s\\n' \"$CARETZ_QUESTION\" >> \"$1\"\n"
                             "[ -t 0 ] && echo stdin-is-a-terminal >> \"$1\"\n"
                             "echo END >> \"$1\"\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    start_notify_command({script.string(), out.string()}, "run outside? rm -rf $HOME; `x`");
    REQUIRE(wait_for_end(out));
    CHECK(file_contents(out) == "arg=" + out.string() +
                                    "\narg=run outside? rm -rf $HOME; `x`\n"
                                    "env=run outside? rm -rf $HOME; `x`\nEND\n");
}

TEST_CASE("notice: the approver notices the question while it waits, and ends it after",
          "[notice]") {
    int in[2], out[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    TempDir dir;
    const auto script = dir.path() / "notify";
    const auto record = dir.path() / "record";
    // The command answers nothing: its output goes nowhere, and the question reads the
    // terminal's keys alone.
    std::ofstream(script)
        << "#!/bin/sh\necho o; echo o >&2\nprintf '%s\\nEND\\n' \"$2\" > \"$1\"\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    {
        Terminal terminal(in[0], out[1]);
        TerminalApprover approver(terminal, std::nullopt,
                                  NoticeSettings{NotifyMode::desktop, {script, record}});
        write_all(in[1], "d");
        CHECK(approver.ask_network({"example.com", 443}) == Decision::deny);
    }
    ::close(out[1]);
    std::string shown;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof buf)) > 0) shown.append(buf, static_cast<size_t>(n));
    ::close(out[0]);
    ::close(in[0]);
    ::close(in[1]);
    CHECK_THAT(shown, Contains("\x1b[22;0t\x1b]0;Caretz waits for an answer\x07\x07"));
    CHECK_THAT(shown,
               Contains("]9;Caretz: allow a sandboxed command to reach example.com:443?\x07"));
    CHECK_THAT(shown, EndsWith("deny\r\n\x1b[23;0t"));
    REQUIRE(wait_for_end(record));
    CHECK(file_contents(record) == "allow a sandboxed command to reach example.com:443?\nEND\n");
}
