#include "agent/line_editor.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/transcript.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;

namespace {

constexpr const char* kLeft = "\x1b[D";
constexpr const char* kRight = "\x1b[C";
constexpr const char* kUp = "\x1b[A";
constexpr const char* kDown = "\x1b[B";
constexpr const char* kDelete = "\x1b[3~";
constexpr const char* kBackspace = "\x7f";
// Octal escapes, as "\x1bb" would read as a single hex escape.
constexpr const char* kAltB = "\033b";
constexpr const char* kAltF = "\033f";
constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

Action feed_all(LineBuffer& buffer, const std::vector<std::string>& keys) {
    Action last = Action::none;
    for (const std::string& key : keys) last = buffer.feed(key);
    return last;
}

struct KeyCase {
    const char* name;
    std::vector<std::string> keys;
    std::string text;
    size_t cursor;
    Action action;
};

void check_cases(const std::vector<KeyCase>& cases) {
    for (const KeyCase& c : cases) {
        INFO(c.name);
        LineBuffer buffer;
        Action action = feed_all(buffer, c.keys);
        CHECK(buffer.text() == c.text);
        CHECK(buffer.cursor() == c.cursor);
        CHECK(action == c.action);
    }
}

}  // namespace

TEST_CASE("keys insert text, move the cursor and delete") {
    check_cases({
        {"typing", {"a", "b", "c"}, "abc", 3, Action::none},
        {"pasted run of text", {"echo hi"}, "echo hi", 7, Action::none},
        {"CR submits", {"ls", "\r"}, "ls", 2, Action::submit},
        {"LF submits", {"ls", "\n"}, "ls", 2, Action::submit},
        {"left, insert", {"ac", kLeft, "b"}, "abc", 2, Action::none},
        {"left stops at the start", {"a", kLeft, kLeft, kLeft}, "a", 0, Action::none},
        {"right stops at the end", {"ab", kLeft, kRight, kRight}, "ab", 2, Action::none},
        {"SS3 left and right", {"abc", "\x1bOD", "\x1bOD", "\x1bOC"}, "abc", 2, Action::none},
        {"^B and ^F", {"abc", "\x02", "\x02", "\x06"}, "abc", 2, Action::none},
        {"ESC[H home", {"bc", "\x1b[H", "a"}, "abc", 1, Action::none},
        {"ESC O H home", {"bc", "\x1bOH", "a"}, "abc", 1, Action::none},
        {"ESC[1~ home", {"bc", "\x1b[1~", "a"}, "abc", 1, Action::none},
        {"^A home", {"bc", "\x01", "a"}, "abc", 1, Action::none},
        {"ESC[F end", {"ab", "\x01", "\x1b[F", "c"}, "abc", 3, Action::none},
        {"ESC O F end", {"ab", "\x01", "\x1bOF", "c"}, "abc", 3, Action::none},
        {"ESC[4~ end", {"ab", "\x01", "\x1b[4~", "c"}, "abc", 3, Action::none},
        {"^E end", {"ab", "\x01", "\x05", "c"}, "abc", 3, Action::none},
        {"DEL backspace", {"abc", kBackspace}, "ab", 2, Action::none},
        {"^H backspace", {"abc", kLeft, "\x08"}, "ac", 1, Action::none},
        {"backspace at the start", {"abc", "\x01", kBackspace}, "abc", 0, Action::none},
        {"delete under the cursor", {"abc", kLeft, kLeft, kDelete}, "ac", 1, Action::none},
        {"delete at the end", {"abc", kDelete}, "abc", 3, Action::none},
        {"^K kills to the end", {"abcd", kLeft, kLeft, "\x0b"}, "ab", 2, Action::none},
        {"^U kills to the start", {"abcd", kLeft, "\x15"}, "d", 0, Action::none},
        {"^W deletes a word", {"git commit -m", "\x17"}, "git commit ", 11, Action::none},
        {"^W skips trailing spaces", {"echo hello  ", "\x17"}, "echo ", 5, Action::none},
        {"^W inside a word", {"echo hello", kLeft, kLeft, "\x17"}, "echo lo", 5, Action::none},
        {"alt-backspace deletes a word", {"a bc", "\x1b\x7f"}, "a ", 2, Action::none},
        {"^Y yanks the kill",
         {"abcd", kLeft, kLeft, "\x0b", "\x01", "\x19"},
         "cdab",
         2,
         Action::none},
        {"alt-b, alt-f", {"one two three", kAltB, kAltB, kAltF}, "one two three", 7, Action::none},
        {"ctrl-arrows", {"one two", "\x1b[1;5D", "\x1b[1;5C"}, "one two", 7, Action::none},
        {"^C interrupts", {"abc", "\x03"}, "abc", 3, Action::interrupt},
        {"^D on an empty line is eof", {"\x04"}, "", 0, Action::eof},
        {"^D deletes under the cursor", {"abc", "\x01", "\x04"}, "bc", 0, Action::none},
        {"^D at the end of a line does nothing", {"abc", "\x04"}, "abc", 3, Action::none},
        {"^L redraws", {"abc", "\x0c"}, "abc", 3, Action::redraw},
        {"unknown CSI ignored", {"a", "\x1b[15~", "\x1b[2~", "b"}, "ab", 2, Action::none},
        {"unknown SS3 ignored", {"a", "\x1bOP", "b"}, "ab", 2, Action::none},
        {"lone and alt escapes ignored", {"a", "\x1b", "\x1bx", "\x1b["}, "a", 1, Action::none},
        {"unbound control keys ignored",
         {"a", "\x07", "\x1a", std::string(1, '\0')},
         "a",
         1,
         Action::none},
        {"tab is text", {"a", "\t", "b"}, "a\tb", 3, Action::none},
        {"bracketed paste",
         {"x", "\x1b[200~", "a", "\r", "b", "\n", "\x1b[A", "\x1b[201~", "\r"},
         "xa\nb\n",
         5,
         Action::submit},
    });
}

TEST_CASE("the cursor moves over whole UTF-8 characters") {
    // é: 2 bytes, 日 and 本: 3 bytes each, 😀: 4 bytes.
    const std::string text = "é日本😀";
    check_cases({
        {"typed one character at a time", {"é", "日", "本", "😀"}, text, 12, Action::none},
        {"left over an emoji", {text, kLeft}, text, 8, Action::none},
        {"left over CJK", {text, kLeft, kLeft}, text, 5, Action::none},
        {"left to the start", {text, kLeft, kLeft, kLeft, kLeft}, text, 0, Action::none},
        {"right over é", {text, "\x01", kRight}, text, 2, Action::none},
        {"backspace removes a whole emoji", {text, kBackspace}, "é日本", 8, Action::none},
        {"backspace over CJK", {text, kLeft, kLeft, kBackspace}, "é本😀", 2, Action::none},
        {"delete removes a whole é", {text, "\x01", kDelete}, "日本😀", 0, Action::none},
        {"insert between multi-byte characters", {text, kLeft, "x"}, "é日本x😀", 9, Action::none},
        {"^W removes a word of multi-byte characters", {"a 日本", "\x17"}, "a ", 2, Action::none},
    });
}

TEST_CASE("invalid UTF-8 becomes U+FFFD so the text stays valid") {
    const std::string one = kReplacement;
    const std::string two = one + one;
    check_cases({
        {"stray continuation byte", {"a", "\x80", "b"}, "a" + one + "b", 5, Action::none},
        {"cut-off sequence", {"\xE6\x97"}, two, 6, Action::none},
        {"overlong form", {"\xC0\xAF"}, two, 6, Action::none},
    });
}

TEST_CASE("the line stops growing at kMaxLineBytes, on a character boundary") {
    LineBuffer buffer;
    // "é" is two bytes: an odd limit falls inside one.
    std::vector<std::string> keys = {"\xc3\xa9\xc3\xa9\xc3\xa9x", "\x15"};
    for (int i = 0; i < 6; ++i) {  // kill the whole line, yank it back ten times: 7 MB uncut
        for (int j = 0; j < 10; ++j) keys.push_back("\x19");
        keys.push_back("\x15");
    }
    keys.push_back("\x19");
    feed_all(buffer, keys);
    CHECK(buffer.text().size() <= kMaxLineBytes);
    CHECK(buffer.text().size() > kMaxLineBytes - 7);
    CHECK(buffer.cursor() == buffer.text().size());
    CHECK((static_cast<unsigned char>(buffer.text().back()) & 0xC0) != 0xC0);  // no cut lead byte
    buffer.feed(std::string(100, 'x'));  // ASCII fills it to the byte
    CHECK(buffer.text().size() == kMaxLineBytes);
    const std::string before = buffer.text();
    buffer.feed("more");
    CHECK(buffer.text() == before);
    feed_all(buffer, {"\x7f", "\x7f", "z"});  // room again: typing works
    CHECK(buffer.text().ends_with("z"));
}

TEST_CASE("history: up and down walk entries and keep edits") {
    History history;
    history.add("one");
    history.add("two");
    LineBuffer buffer(history);

    feed_all(buffer, {"draft"});
    buffer.feed(kUp);
    CHECK(buffer.text() == "two");
    CHECK(buffer.cursor() == 3);
    buffer.feed(kUp);
    CHECK(buffer.text() == "one");
    buffer.feed(kUp);
    CHECK(buffer.text() == "one");

    buffer.feed("!");
    buffer.feed(kDown);
    CHECK(buffer.text() == "two");
    buffer.feed(kDown);
    CHECK(buffer.text() == "draft");
    CHECK(buffer.cursor() == 5);
    buffer.feed(kDown);
    CHECK(buffer.text() == "draft");

    feed_all(buffer, {kUp, kUp});
    CHECK(buffer.text() == "one!");
    CHECK(feed_all(buffer, {"\x10", "\x0e", "\r"}) == Action::submit);
    CHECK(buffer.text() == "two");
    CHECK(history[0] == "one");
}

TEST_CASE("history: up with no history leaves the line alone") {
    LineBuffer buffer;
    feed_all(buffer, {"abc", kUp, kDown});
    CHECK(buffer.text() == "abc");
}

TEST_CASE("history skips empty lines and repeats and drops the oldest when full") {
    History history(3);
    for (const char* line : {"a", "", "b", "b", "c", "b", "d"}) history.add(line);
    REQUIRE(history.size() == 3);
    CHECK(history[0] == "c");
    CHECK(history[1] == "b");
    CHECK(history[2] == "d");
}

TEST_CASE("history keeps out a line typed with a leading space, as bash's ignorespace") {
    History history;
    for (const char* line : {"kept", " export TOKEN=secret", "\tkept too"}) history.add(line);
    REQUIRE(history.size() == 2);
    CHECK(history[0] == "kept");
    CHECK(history[1] == "\tkept too");
}

TEST_CASE("history saves each line as it is added, privately, bounded, beside other sessions") {
    TempDir dir;
    // The folder does not exist yet on a first run.
    std::string path = (dir.path() / "caretz" / "history").string();
    History one(3), two(3);
    one.add_and_save("from one", path);
    two.add_and_save("from two", path);
    one.add_and_save(" secret", path);
    one.add_and_save("one again", path);
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0600);

    History next(3);
    next.load(path);
    REQUIRE(next.size() == 3);
    CHECK(next[0] == "from one");
    CHECK(next[1] == "from two");
    CHECK(next[2] == "one again");
    // The session's own walk keeps its own lines.
    REQUIRE(one.size() == 2);
    CHECK(one[1] == "one again");

    two.add_and_save("fourth", path);
    next = History(3);
    next.load(path);
    REQUIRE(next.size() == 3);
    CHECK(next[0] == "from two");
    CHECK(next[2] == "fourth");
}

TEST_CASE("history's file is in Caretz's state folder") {
    const char* set = std::getenv("XDG_STATE_HOME");
    const std::string before = set ? set : "";
    ::unsetenv("XDG_STATE_HOME");
    CHECK(Transcript::history_path("/home/u") == "/home/u/.local/state/caretz/history");
    ::setenv("XDG_STATE_HOME", "/state", 1);
    CHECK(Transcript::history_path("/home/u") == "/state/caretz/history");
    if (set) {
        ::setenv("XDG_STATE_HOME", before.c_str(), 1);
    } else {
        ::unsetenv("XDG_STATE_HOME");
    }
}

TEST_CASE("history saves and loads multi-line entries, privately") {
    char dir_template[] = "/tmp/caretz-history-XXXXXX";
    REQUIRE(::mkdtemp(dir_template) != nullptr);
    std::string path = std::string(dir_template) + "/history";

    History saved;
    for (const char* line : {"ls -l", "printf 'a\nb'", "echo \\n", "cr\rhere", "back\\"}) {
        saved.add(line);
    }
    saved.save(path);

    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0600);
    std::ifstream file(path);
    std::string contents((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    CHECK(contents == "ls -l\nprintf 'a\\nb'\necho \\\\n\ncr\\rhere\nback\\\\\n");

    History loaded(4);
    loaded.load(path);
    REQUIRE(loaded.size() == 4);
    CHECK(loaded[0] == "printf 'a\nb'");
    CHECK(loaded[1] == "echo \\n");
    CHECK(loaded[2] == "cr\rhere");
    CHECK(loaded[3] == "back\\");

    ::unlink(path.c_str());
    ::rmdir(dir_template);
}

TEST_CASE("history file errors are ignored") {
    History history;
    history.load("/nonexistent/caretz/history");
    CHECK(history.size() == 0);
    history.add("x");
    CHECK_NOTHROW(history.save("/nonexistent/caretz/history"));
}

TEST_CASE("the decoder splits a stream into keys") {
    KeyDecoder decoder;
    using Keys = std::vector<std::string>;
    CHECK(decoder.feed("ab\r") == Keys{"a", "b", "\r"});
    CHECK(decoder.feed("\x1b[A\x1bOH\x1b[3~\x1b[1;5D") ==
          Keys{"\x1b[A", "\x1bOH", "\x1b[3~", "\x1b[1;5D"});
    CHECK(decoder.feed("é日😀") == Keys{"é", "日", "😀"});
    CHECK(decoder.feed("\x1b\x1b[B") == Keys{"\x1b", "\x1b[B"});
    CHECK(decoder.feed("\033b\x1b\x7f") == Keys{kAltB, "\x1b\x7f"});
    CHECK(decoder.feed("\x1b[200~x\x1b[201~") == Keys{"\x1b[200~", "x", "\x1b[201~"});
    CHECK_FALSE(decoder.has_pending());
}

TEST_CASE("the decoder joins keys split across chunks") {
    KeyDecoder decoder;
    using Keys = std::vector<std::string>;
    CHECK(decoder.feed("a\x1b").size() == 1);
    CHECK(decoder.has_pending());
    CHECK(decoder.feed("[").empty());
    CHECK(decoder.feed("3").empty());
    CHECK(decoder.feed("~b") == Keys{"\x1b[3~", "b"});
    CHECK(decoder.feed("\x1bO").empty());
    CHECK(decoder.feed("D") == Keys{"\x1bOD"});
    CHECK(decoder.feed("\xF0\x9F").empty());
    CHECK(decoder.feed("\x98").empty());
    CHECK(decoder.feed("\x80!") == Keys{"😀", "!"});
}

TEST_CASE("a lone ESC waits until flushed") {
    KeyDecoder decoder;
    CHECK(decoder.feed("\x1b").empty());
    CHECK(decoder.has_pending());
    CHECK(decoder.flush() == std::vector<std::string>{"\x1b"});
    CHECK_FALSE(decoder.has_pending());
    CHECK(decoder.flush().empty());
    CHECK(decoder.feed("x") == std::vector<std::string>{"x"});
}

TEST_CASE("the decoder cuts off malformed input") {
    KeyDecoder decoder;
    using Keys = std::vector<std::string>;
    CHECK(decoder.feed("\x1b[1\r") == Keys{"\x1b[1", "\r"});
    CHECK(decoder.feed("\x80\xE6\x97x") == Keys{"\x80", "\xE6\x97", "x"});
    CHECK(decoder.feed("\x1b\xC3\xA9") == Keys{"\x1b", "é"});
    std::string endless = "\x1b[" + std::string(100, '1');
    Keys keys = decoder.feed(endless);
    REQUIRE_FALSE(keys.empty());
    CHECK(keys[0].size() == 32);
    CHECK_FALSE(decoder.has_pending());
}

namespace {

LineBuffer buffer_with(const std::vector<std::string>& keys) {
    LineBuffer buffer;
    feed_all(buffer, keys);
    return buffer;
}

// The text drawn by render, between the carriage return and the erase to end of line.
std::string drawn(const std::string& rendered) {
    size_t end = rendered.find("\x1b[K");
    REQUIRE(rendered.rfind("\r", 0) == 0);
    REQUIRE(end != std::string::npos);
    return rendered.substr(1, end - 1);
}

// The column render leaves the cursor in.
int cursor_column(const std::string& rendered) {
    size_t move = rendered.find("\x1b[K\r");
    REQUIRE(move != std::string::npos);
    std::string tail = rendered.substr(move + 4);
    if (tail.empty()) return 0;
    REQUIRE(tail.rfind("\x1b[", 0) == 0);
    REQUIRE(tail.back() == 'C');
    return std::stoi(tail.substr(2));
}

}  // namespace

TEST_CASE("render draws a short line and puts the cursor back") {
    CHECK(render("> ", buffer_with({"abc", kLeft, kLeft}), 80) == "\r> abc\x1b[K\r\x1b[3C");
    CHECK(render("> ", buffer_with({}), 80) == "\r> \x1b[K\r\x1b[2C");
    CHECK(render("", buffer_with({"abc", "\x01"}), 80) == "\rabc\x1b[K\r");
    CHECK(render("> ", buffer_with({"é日😀", kLeft}), 80) == "\r> é日😀\x1b[K\r\x1b[5C");
}

TEST_CASE("render shows control characters in caret notation") {
    CHECK(render("> ", buffer_with({"a\tb", kLeft}), 80) == "\r> a^Ib\x1b[K\r\x1b[5C");
    CHECK(drawn(render("> ", buffer_with({"x\x1b[2J"}), 80)) == "> x^[[2J");
    CHECK(drawn(render("> ", buffer_with({"\x1b[200~", "\x03\x7f", "\r", "\x1b[201~"}), 80)) ==
          "> ^C^?^J");
    CHECK(drawn(render("> ",
                       buffer_with({"a\xC2\x9B"
                                    "b"}),
                       80)) == "> aM-^[b");
    CHECK(drawn(render("\x1b]0;x\x07> ", buffer_with({}), 80)) == "^[]0;x^G> ");
}

TEST_CASE("render shows what the screen would hide escaped, as the offer does") {
    // A right-to-left override would draw the rest of the line backwards; a Hangul filler
    // and a no-break space look like nothing or like a space the shell does not split on.
    CHECK(render("> ",
                 buffer_with({"echo \xE2\x80\xAE"
                              "cba",
                              kLeft}),
                 80) == "\r> echo \\u202ecba\x1b[K\r\x1b[15C");
    CHECK(drawn(render("> ", buffer_with({"rm \xE3\x85\xA4 x\xC2\xA0y\xF3\xA0\x80\x81"}), 80)) ==
          "> rm \\u3164 x\\u00a0y\\U000e0001");
    // Bytes that are not UTF-8 were stored as U+FFFD, which is shown as such.
    CHECK(drawn(render("> ", buffer_with({"\xFF"}), 80)) == "> \\ufffd");
}

TEST_CASE("render scrolls a long line horizontally instead of wrapping") {
    LineBuffer buffer = buffer_with({"abcdefghijklmnopqrstuvwxyz"});
    CHECK(render("> ", buffer, 10) == "\rstuvwxyz\x1b[K\r\x1b[8C");
    feed_all(buffer, {"\x01"});
    CHECK(render("> ", buffer, 10) == "\r> abcdefg\x1b[K\r\x1b[2C");
    // Exactly filling all but the last column still fits.
    CHECK(render("> ", buffer_with({"abcdefg"}), 10) == "\r> abcdefg\x1b[K\r\x1b[9C");
}

TEST_CASE("render_whole leaves the entered line whole, escaped as render shows it") {
    // Cleared first, then all of it, however wide: the terminal wraps it.
    CHECK(render_whole("> ", "abcdefghijklmnopqrstuvwxyz") ==
          "\r\x1b[K> abcdefghijklmnopqrstuvwxyz");
    CHECK(render_whole("> ", "x\x1b[2J\xE2\x80\xAE") == "\r\x1b[K> x^[[2J\\u202e");
}

TEST_CASE("render keeps the cursor and the character under it on screen") {
    const std::string text = "0123456789 abcdefghij 日本語のテキスト ^X \t end";
    for (int columns : {2, 5, 10, 13, 40, 80}) {
        LineBuffer buffer = buffer_with({text});
        for (;;) {
            std::string rendered = render("caretz> ", buffer, columns);
            CAPTURE(columns, buffer.cursor());
            std::string shown = drawn(rendered);
            int column = cursor_column(rendered);
            CHECK(column < columns);
            // Widths here: ASCII 1, CJK 2, ^I 2; no cell may reach the last column.
            int width = 0;
            for (size_t i = 0; i < shown.size(); ++i) {
                unsigned char byte = shown[i];
                if ((byte & 0xC0) == 0x80) continue;
                width += byte >= 0xE0 ? 2 : 1;
            }
            CHECK(width <= std::max(1, columns - 1));
            if (buffer.cursor() == 0) break;
            buffer.feed(kLeft);
        }
    }
}

TEST_CASE("render pads a wide character cut by the left edge") {
    LineBuffer buffer = buffer_with({"x日本語テキスト"});
    // 17 columns of prompt and text; 8 columns show 7 from column 12, which cuts キ (11-12).
    std::string rendered = render("> ", buffer, 8);
    CHECK(drawn(rendered) == " スト");
    CHECK(cursor_column(rendered) == 5);
}

namespace {

struct Pipe {
    int read_end = -1;
    int write_end = -1;
    Pipe() {
        int fds[2];
        REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
        read_end = fds[0];
        write_end = fds[1];
    }
    ~Pipe() {
        close_read();
        close_write();
    }
    void close_read() {
        if (read_end >= 0) ::close(read_end);
        read_end = -1;
    }
    void close_write() {
        if (write_end >= 0) ::close(write_end);
        write_end = -1;
    }
};

void write_bytes(int fd, const std::string& bytes) {
    REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

// Everything readable from `fd` now, waiting briefly for stragglers.
std::string read_available(int fd) {
    std::string bytes;
    pollfd readable{fd, POLLIN, 0};
    while (::poll(&readable, 1, 100) > 0 && (readable.revents & POLLIN)) {
        char chunk[4096];
        ssize_t count = ::read(fd, chunk, sizeof chunk);
        if (count <= 0) break;
        bytes.append(chunk, static_cast<size_t>(count));
    }
    return bytes;
}

bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

TEST_CASE("LineEditor over pipes: echo, typeahead, interrupt and eof") {
    Pipe input;
    Pipe output;
    caretz::Terminal terminal(input.read_end, output.write_end);
    LineEditor editor(terminal, [] { return 80; });

    write_bytes(input.write_end, "hi\x1b[D\xC3\xA9\rnext\r\x1b[A\r");
    LineResult first = editor.read_line("> ");
    CHECK(first.kind == LineResult::line);
    CHECK(first.text == "héi");
    CHECK(read_available(output.read_end) ==
          "\r> \x1b[K\r\x1b[2C"
          "\r\x1b[K> héi\r\n");

    LineResult second = editor.read_line("> ");
    CHECK(second.kind == LineResult::line);
    CHECK(second.text == "next");
    editor.add_history("héi");
    editor.add_history("next");
    LineResult recalled = editor.read_line("> ");
    CHECK(recalled.text == "next");
    read_available(output.read_end);

    write_bytes(input.write_end, "oops\x03");
    LineResult interrupted = editor.read_line("> ");
    CHECK(interrupted.kind == LineResult::interrupted);
    CHECK(interrupted.text == "oops");
    CHECK(ends_with(read_available(output.read_end), "\r\x1b[K> oops^C\r\n"));

    write_bytes(input.write_end, "\x04");
    CHECK(editor.read_line("> ").kind == LineResult::eof);

    write_bytes(input.write_end, "partial");
    input.close_write();
    LineResult closed = editor.read_line("> ");
    CHECK(closed.kind == LineResult::eof);
    CHECK(closed.text.empty());
}

TEST_CASE("LineEditor flushes a lone ESC after a short silence") {
    Pipe input;
    Pipe output;
    caretz::Terminal terminal(input.read_end, output.write_end);
    LineEditor editor(terminal, [] { return 80; });
    write_bytes(input.write_end, "a\x1b");
    ssize_t written = 0;
    std::thread typist([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        written = ::write(input.write_end, "b\r", 2);
    });
    LineResult result = editor.read_line("> ");
    typist.join();
    CHECK(written == 2);
    // Had the ESC waited for the next key, "ESC b" would have been Alt-b, a word motion.
    CHECK(result.text == "ab");
}

TEST_CASE("LineEditor on a real pseudo-terminal") {
    int master = -1;
    int slave = -1;
    REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
    termios raw{};
    REQUIRE(::tcgetattr(slave, &raw) == 0);
    ::cfmakeraw(&raw);
    REQUIRE(::tcsetattr(slave, TCSANOW, &raw) == 0);

    caretz::Terminal terminal(slave, slave);
    LineEditor editor(terminal, [] { return 20; });
    write_bytes(master,
                "ls -l\x17"
                "cat /etc/hostname\x01\x1bOC\x1bOC\x1bOC\x1b[3~\r");
    LineResult result = editor.read_line("$ ");
    CHECK(result.kind == LineResult::line);
    CHECK(result.text == "ls at /etc/hostname");

    std::string echoed = read_available(master);
    CHECK(echoed.rfind("\r$ \x1b[K\r\x1b[2C", 0) == 0);
    // 21 columns of prompt and text on a 20-column terminal: once entered, the line is left
    // whole, wrapping, not as the window the cursor last saw.
    CHECK(ends_with(echoed, "\r\x1b[K$ ls at /etc/hostname\r\n"));

    ::close(slave);
    ::close(master);
}
