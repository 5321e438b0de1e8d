#include "escalation/offer.h"

#include <algorithm>
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
        offer_text({command,
                    "/home/u/\xE3\x85\xA4",
                    {Refusal{RefusalKind::write, "/etc/\xD8\x9Cx", "touch: \x1b]0;t\x07"}},
                    std::nullopt,
                    "/home/u"});
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

TEST_CASE("the offer says what the sandboxed attempt already changed", "[offer]") {
    const std::string ws = "/home/u/work";
    auto change = [](Change::Kind kind, std::string path, std::string from = "") {
        return Change{kind, std::move(path), std::move(from), false};
    };
    SECTION("nothing recorded: the reminder") {
        CHECK(changes_text(std::nullopt, ws) ==
              "The sandboxed attempt already ran: check for partial side effects.\n");
    }
    SECTION("nothing changed") {
        CHECK(changes_text(ChangeList{}, ws) ==
              "The sandboxed attempt already ran. It changed nothing in the workspace.\n");
    }
    SECTION("nothing seen, but the list may be incomplete: never \"nothing changed\"") {
        const std::string text = changes_text(ChangeList{{}, 0, "3 folders have no watch"}, ws);
        CHECK(text.find("changed nothing") == std::string::npos);
        CHECK(text ==
              "The sandboxed attempt already ran. Caretz saw no change in the workspace, but the "
              "list may be incomplete: 3 folders have no watch. Check for partial side effects.\n");
    }
    SECTION("a few changes, relative to the workspace, in the order given") {
        ChangeList list{{change(Change::Kind::created, ws + "/a.txt"),
                         change(Change::Kind::deleted, ws + "/c.txt"),
                         change(Change::Kind::renamed, ws + "/e.txt", ws + "/d.txt"),
                         Change{Change::Kind::created, ws + "/out", "", true}},
                        4,
                        ""};
        CHECK(changes_text(list, ws) ==
              "The sandboxed attempt already changed 4 files in the workspace:\n"
              "    created  a.txt\n"
              "    deleted  c.txt\n"
              "    renamed  d.txt -> e.txt\n"
              "    created  out/\n");
        list.kept.resize(1);
        list.count = 1;
        CHECK_THAT(changes_text(list, ws),
                   Catch::StartsWith("The sandboxed attempt already changed 1 file in"));
    }
    SECTION("ten, then how many more; the reason it may be incomplete after them") {
        ChangeList list;
        for (int i = 0; i < 256; ++i)
            list.kept.push_back(change(Change::Kind::created, ws + "/f" + std::to_string(i)));
        list.count = 5000;
        std::string text = changes_text(list, ws);
        CHECK_THAT(text, Catch::StartsWith("The sandboxed attempt already changed 5,000 files "
                                           "in the workspace:\n    created  f0\n"));
        CHECK_THAT(text, Catch::EndsWith("    created  f9\n    and 4,990 more\n"));
        CHECK(std::count(text.begin(), text.end(), '\n') == 12);
        list.incomplete = "events were lost";
        CHECK_THAT(changes_text(list, ws),
                   Catch::EndsWith("    and 4,990 more\nThe list may be incomplete: events were "
                                   "lost. Check for partial side effects.\n"));
    }
    SECTION("a path outside the workspace in full; every path escaped") {
        ChangeList list{{change(Change::Kind::modified, "/srv/data/\x1b[2Jx\n"),
                         change(Change::Kind::created, ws + "/\xE2\x80\xAEtxt.sh")},
                        2,
                        ""};
        const std::string text = changes_text(list, ws);
        CHECK_THAT(text, Catch::Contains("changed 2 files in the folders it may write:\n"));
        CHECK_THAT(text, Catch::Contains("    modified /srv/data/\\e[2Jx\\n\n"));
        CHECK_THAT(text, Catch::Contains("    created  \\u202etxt.sh\n"));
    }
}

TEST_CASE("numbers are grouped by thousands", "[offer]") {
    CHECK(grouped(0) == "0");
    CHECK(grouped(999) == "999");
    CHECK(grouped(1000) == "1,000");
    CHECK(grouped(4990) == "4,990");
    CHECK(grouped(1234567) == "1,234,567");
}
