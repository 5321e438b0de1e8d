#include "pty/mark_parser.h"

#include <catch2/catch.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using caretz::MarkParser;

// Records output and marks as one readable transcript: output verbatim, marks as <A>, <B>,
// <C>, <U:lines>, <D:status>, <cwd:path>.
class Transcript : public MarkParser::Handler {
public:
    void on_output(std::string_view bytes) override { text.append(bytes); }
    void on_prompt_start() override { text += "<A>"; }
    void on_prompt_end() override { text += "<B>"; }
    void on_command_start() override { text += "<C>"; }
    void on_unread_lines(int lines) override { text += "<U:" + std::to_string(lines) + ">"; }
    void on_command_done(int status) override { text += "<D:" + std::to_string(status) + ">"; }
    void on_cwd(std::string path) override { text += "<cwd:" + path + ">"; }

    std::string text;
};

const std::string kNonce = "n0nce42";

std::string mark(const std::string& body, const std::string& nonce = kNonce) {
    return "\x1b]" + body + ";caretz=" + nonce + "\x07";
}

std::string parse_whole(const std::string& input) {
    MarkParser parser(kNonce);
    Transcript transcript;
    parser.feed(input, transcript);
    parser.flush(transcript);
    return transcript.text;
}

std::string parse_in_pieces(const std::string& input, size_t piece) {
    MarkParser parser(kNonce);
    Transcript transcript;
    for (size_t pos = 0; pos < input.size(); pos += piece) {
        parser.feed(std::string_view(input).substr(pos, piece), transcript);
    }
    parser.flush(transcript);
    return transcript.text;
}

}  // namespace

TEST_CASE("every mark kind is reported and not passed through", "[mark_parser]") {
    std::string input = mark("133;A") + "$ " + mark("133;B") + "ls\r\n" + mark("133;C") +
                        "a b\r\n" + mark("133;D;0") + mark("7;file://host/home/u") + mark("133;A");
    CHECK(parse_whole(input) == "<A>$ <B>ls\r\n<C>a b\r\n<D:0><cwd:/home/u><A>");
}

TEST_CASE("exit statuses are parsed", "[mark_parser]") {
    CHECK(parse_whole(mark("133;D;1")) == "<D:1>");
    CHECK(parse_whole(mark("133;D;127")) == "<D:127>");
    CHECK(parse_whole(mark("133;D;255")) == "<D:255>");
}

TEST_CASE("the command-start mark is written as the hooks write it", "[mark_parser]") {
    CHECK(caretz::command_start_mark(kNonce) == mark("133;C"));
    CHECK(parse_whole(caretz::command_start_mark(kNonce)) == "<C>");
}

TEST_CASE("the count of lines typed ahead and left unread comes before the end", "[mark_parser]") {
    CHECK(parse_whole(mark("133;U;2") + mark("133;D;0")) == "<U:2><D:0>");
    CHECK(parse_whole(mark("133;U;") + "x") == mark("133;U;") + "x");
    CHECK(parse_whole(mark("133;U;-1")) == mark("133;U;-1"));
    CHECK(parse_whole(mark("133;U;2", "wrong")) == mark("133;U;2", "wrong"));
}

TEST_CASE("marks split at every byte position are still found", "[mark_parser]") {
    std::string input = "out" + mark("133;C") + "x\x1b[31my" + mark("133;D;2") + "tail" +
                        mark("7;file://h/a%20b") + "\x1b]0;title\x07" + "end";
    std::string expected =
        "out<C>x\x1b[31my<D:2>tail<cwd:/a b>\x1b]0;title\x07"
        "end";
    REQUIRE(parse_whole(input) == expected);
    for (size_t split = 1; split < input.size(); ++split) {
        MarkParser parser(kNonce);
        Transcript transcript;
        parser.feed(std::string_view(input).substr(0, split), transcript);
        parser.feed(std::string_view(input).substr(split), transcript);
        parser.flush(transcript);
        INFO("split at " << split);
        CHECK(transcript.text == expected);
    }
    CHECK(parse_in_pieces(input, 1) == expected);
    CHECK(parse_in_pieces(input, 3) == expected);
}

TEST_CASE("a mark with a wrong or missing nonce is ordinary output", "[mark_parser]") {
    std::vector<std::string> forgeries = {
        mark("133;D;0", "wrong"),          "\x1b]133;D;0\x07",
        "\x1b]133;D;0;caretz=\x07",        mark("133;D;0", kNonce + "x"),
        mark("133;D;0", kNonce.substr(1)), mark("133;A", "x" + kNonce),
        "\x1b]133;C;caretz=wrong\x1b\\",   "\x1b]7;file://h/etc\x07",
    };
    for (const std::string& forged : forgeries) {
        INFO(forged);
        CHECK(parse_whole("a" + forged + "b") == "a" + forged + "b");
        CHECK(parse_in_pieces("a" + forged + "b", 1) == "a" + forged + "b");
    }
}

TEST_CASE("malformed marks with the right nonce are ordinary output", "[mark_parser]") {
    std::vector<std::string> malformed = {
        mark("133;D;"),
        mark("133;D;x1"),
        mark("133;D;-1"),
        mark("133;D;1 "),
        mark("133;Z"),
        mark("133;AA"),
        mark("7;file://host"),
        mark("7;http://h/x"),
        mark("7;file://h/bad%2"),
        mark("7;file://h/%zz"),
        mark("7;file://h/nul%00"),
        mark("133;D;99999999999"),
    };
    for (const std::string& bad : malformed) {
        INFO(bad);
        CHECK(parse_whole(bad) == bad);
    }
}

TEST_CASE("ST (ESC \\) terminates a mark as BEL does", "[mark_parser]") {
    std::string st_mark = "\x1b]133;D;5;caretz=" + kNonce + "\x1b\\";
    CHECK(parse_whole("x" + st_mark + "y") == "x<D:5>y");
    CHECK(parse_in_pieces("x" + st_mark + "y", 1) == "x<D:5>y");
}

TEST_CASE("garbage and unterminated sequences pass through unchanged", "[mark_parser]") {
    SECTION("plain escapes and CSI") {
        std::string input =
            "\x1b[1;31mred\x1b[0m\x1b"
            "7\x1b"
            "8\x1b\x1b]x";
        CHECK(parse_whole(input) == input);
    }
    SECTION("an OSC cut short by a newline, followed by a real mark") {
        std::string input = "\x1b]133;A\nnext" + mark("133;B");
        CHECK(parse_whole(input) == "\x1b]133;A\nnext<B>");
    }
    SECTION("an OSC cut short by ESC that starts a real mark") {
        std::string input = "\x1b]133;D;0" + mark("133;D;7");
        CHECK(parse_whole(input) == "\x1b]133;D;0<D:7>");
        CHECK(parse_in_pieces(input, 1) == "\x1b]133;D;0<D:7>");
    }
    SECTION("a lone ESC at the end is held, then flushed") {
        MarkParser parser(kNonce);
        Transcript transcript;
        parser.feed("abc\x1b", transcript);
        CHECK(transcript.text == "abc");
        parser.flush(transcript);
        CHECK(transcript.text == "abc\x1b");
    }
    SECTION("an unterminated mark at the end is flushed as output") {
        std::string input = "\x1b]133;D;0;caretz=" + kNonce;
        CHECK(parse_whole(input) == input);
    }
    SECTION("other OSCs are passed on before their end arrives") {
        MarkParser parser(kNonce);
        Transcript transcript;
        parser.feed("\x1b]0;my title", transcript);
        CHECK(transcript.text == "\x1b]0;my title");
    }
}

TEST_CASE("an OSC longer than the bound is output, and marks after it still work",
          "[mark_parser]") {
    std::string huge = "\x1b]133;" + std::string(MarkParser::kMaxMarkSize + 100, 'x') + "\x07";
    std::string input = huge + mark("133;C") + "out";
    CHECK(parse_whole(input) == huge + "<C>out");
    CHECK(parse_in_pieces(input, 7) == huge + "<C>out");
}

TEST_CASE("cwd paths are percent-decoded", "[mark_parser]") {
    CHECK(parse_whole(mark("7;file://h/tmp/a%20b%3Bc")) == "<cwd:/tmp/a b;c>");
    CHECK(parse_whole(mark("7;file://h/%C3%A9t%C3%A9/%E6%97%A5")) == "<cwd:/été/日>");
    CHECK(parse_whole(mark("7;file:///no/host")) == "<cwd:/no/host>");
    CHECK(parse_whole(mark("7;file://h/x%2fy%7E")) == "<cwd:/x/y~>");
}

TEST_CASE("plain output is passed through in large pieces", "[mark_parser]") {
    MarkParser parser(kNonce);
    struct Counter : MarkParser::Handler {
        void on_output(std::string_view bytes) override {
            ++calls;
            size += bytes.size();
        }
        int calls = 0;
        size_t size = 0;
    } counter;
    std::string big(1 << 20, 'a');
    parser.feed(big, counter);
    CHECK(counter.calls == 1);
    CHECK(counter.size == big.size());
}

TEST_CASE("an empty nonce is refused", "[mark_parser]") {
    CHECK_THROWS_AS(MarkParser(""), std::invalid_argument);
}

TEST_CASE("random mixes of marks and near-marks parse the same however they are split",
          "[mark_parser]") {
    const std::vector<std::string> tokens = {mark("133;A"),
                                             mark("133;D;3"),
                                             mark("7;file://h/x%20y"),
                                             mark("133;C", "other"),
                                             "\x1b",
                                             "]",
                                             "\x07",
                                             "\\",
                                             "133;",
                                             "7;",
                                             ";caretz=" + kNonce,
                                             "D;",
                                             "text ",
                                             "\r\n",
                                             "\x1b[0m",
                                             "%41"};
    std::mt19937 random(42);
    for (int round = 0; round < 300; ++round) {
        std::string input;
        for (int i = 0; i < 40; ++i) input += tokens[random() % tokens.size()];
        std::string whole = parse_whole(input);
        MarkParser parser(kNonce);
        Transcript transcript;
        for (size_t pos = 0; pos < input.size();) {
            size_t piece = 1 + random() % 12;
            parser.feed(std::string_view(input).substr(pos, piece), transcript);
            pos += piece;
        }
        parser.flush(transcript);
        INFO(input);
        REQUIRE(transcript.text == whole);
    }
}
