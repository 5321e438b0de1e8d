#include "escalation/offer.h"

#include <catch2/catch.hpp>
#include <string>

using namespace caretz;

TEST_CASE("shown_escaped shows what the screen would hide, and nothing else", "[offer]") {
    struct Case {
        const char* text;
        const char* shown;
    };
    const Case cases[] = {
        {"ls -la ~/src", "ls -la ~/src"},
        {"caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80 \xE2\x9C\x93",
         "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80 \xE2\x9C\x93"},
        {"a\\b", "a\\\\b"},
        {"\x1b[31mred\rover\n\t", "\\e[31mred\\rover\\n\\t"},
        {"\x07\x7f", "\\x07\\x7f"},
        // Bytes that are not UTF-8 show as bytes; an overlong CSI stays two bytes.
        {"\xFF\xC0\x9B", "\\xff\\xc0\\x9b"},
        {"\xE6\x97", "\\xe6\\x97"},
        {"\xC2\x9B", "\\u009b"},  // C1 CSI
        {"\xE2\x80\xAE"
         "cod.exe",
         "\\u202ecod.exe"},                                // right-to-left override
        {"\xE2\x81\xA6x\xE2\x81\xA9", "\\u2066x\\u2069"},  // isolates
        {"a\xE2\x80\x8B"
         "b",
         "a\\u200bb"},  // zero-width space
        {"\xEF\xBB\xBF", "\\ufeff"},
        {"\xC2\xAD", "\\u00ad"},
        // Rows that a hand-kept list missed.
        {"rm\xD8\x9C", "rm\\u061c"},                  // ARABIC LETTER MARK
        {"x\xF3\xA0\x80\x81", "x\\U000e0001"},        // LANGUAGE TAG
        {"x\xF3\xA0\x81\xBF", "x\\U000e007f"},        // CANCEL TAG
        {"x\xF3\xA0\x81\xA1", "x\\U000e0061"},        // TAG LATIN SMALL LETTER A
        {"rm -rf \xE3\x85\xA4/", "rm -rf \\u3164/"},  // HANGUL FILLER
        {"\xE1\x85\x9F", "\\u115f"},                  // HANGUL CHOSEONG FILLER
        {"\xE1\x85\xA0", "\\u1160"},                  // HANGUL JUNGSEONG FILLER
        {"\xEF\xBE\xA0", "\\uffa0"},                  // HALFWIDTH HANGUL FILLER
        {"\xE2\xA0\x80", "\\u2800"},                  // BRAILLE PATTERN BLANK
        {"a\xC2\xA0"
         "b",
         "a\\u00a0b"},  // no-break space
        {"a\xE2\x80\xA8"
         "b",
         "a\\u2028b"},                // LINE SEPARATOR
        {"\xEE\x80\x80", "\\ue000"},  // private use
        {"\xCD\xB8", "\\u0378"},      // unassigned
        {"\xEF\xBF\xBD", "\\ufffd"},
    };
    for (const auto& c : cases) {
        INFO(c.text);
        CHECK(shown_escaped(c.text) == c.shown);
    }
    CHECK(shown_escaped(std::string("a\0b", 3)) == "a\\x00b");
}

TEST_CASE("the offer shows the command, its cwd and the evidence escaped", "[offer]") {
    const std::string command = "echo hi # \xE2\x80\xAE\xF3\xA0\x80\x81\x1b[2J";
    const std::string offer =
        offer_text(command, "/home/u/\xE3\x85\xA4",
                   {Refusal{RefusalKind::write, "/etc/\xD8\x9Cx", "touch: \x1b]0;t\x07"}});
    CHECK(offer.find("  command: echo hi # \\u202e\\U000e0001\\e[2J\n") != std::string::npos);
    CHECK(offer.find("  in:      /home/u/\\u3164\n") != std::string::npos);
    CHECK(offer.find("  write: /etc/\\u061cx\n") != std::string::npos);
    CHECK(offer.find("      touch: \\e]0;t\\x07\n") != std::string::npos);
    for (const char* hidden : {"\xE2\x80\xAE", "\xF3\xA0\x80\x81", "\xE3\x85\xA4", "\xD8\x9C",
                               "\x07", "\x1b[2J", "\x1b]0"})
        CHECK(offer.find(hidden) == std::string::npos);
}

TEST_CASE("offer keys: o, s and d; Enter and Esc deny", "[offer]") {
    CHECK(decision_for_key("o") == Decision::allow_once);
    CHECK(decision_for_key("S") == Decision::allow_session);
    CHECK(decision_for_key("d") == Decision::deny);
    CHECK(decision_for_key("\r") == Decision::deny);
    CHECK(decision_for_key("\x1b") == Decision::deny);
    CHECK_FALSE(decision_for_key("y"));
}
