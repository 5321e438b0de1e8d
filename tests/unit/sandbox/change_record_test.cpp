#include "sandbox/change_record.h"

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

using namespace caretz;

namespace {

using K = Change::Kind;

// The list as "kind path [<- from]" lines, in its order.
std::vector<std::string> lines(const ChangeList& list) {
    std::vector<std::string> out;
    for (const auto& c : list.kept)
        out.push_back(std::string(to_string(c.kind)) + " " + c.path +
                      (c.from.empty() ? "" : " <- " + c.from) + (c.folder ? "/" : ""));
    return out;
}

}  // namespace

TEST_CASE("change record: each path's net change, shortest first") {
    ChangeRecord r;
    r.made("/w/b.txt", false);
    r.written("/w/b.txt", false);
    r.made("/w/a.txt", false);
    r.removed("/w/c.txt", false);
    r.renamed("/w/d.txt", "/w/e.txt", false);
    r.written("/w/sub/long-name.log", false);
    r.made("/w/out", true);
    const ChangeList list = r.list();
    CHECK(list.count == 6);
    CHECK(list.incomplete.empty());
    CHECK(lines(list) == std::vector<std::string>{"created /w/out/", "created /w/a.txt",
                                                  "created /w/b.txt", "deleted /w/c.txt",
                                                  "renamed /w/e.txt <- /w/d.txt",
                                                  "modified /w/sub/long-name.log"});
    CHECK(r.made_folders() == std::vector<std::string>{"/w/out"});
    // A folder removed and made again is new too: what is in it is listed.
    r.removed("/w/build", true);
    r.made("/w/build", true);
    CHECK(r.made_folders() == std::vector<std::string>{"/w/out", "/w/build"});
}

TEST_CASE("change record: what a command undid itself is no change") {
    ChangeRecord r;
    r.made("/w/tmp", false);  // made and removed again
    r.written("/w/tmp", false);
    r.removed("/w/tmp", false);
    r.renamed("/w/x", "/w/y", false);  // renamed and back
    r.renamed("/w/y", "/w/x", false);
    CHECK(r.list().count == 0);
    CHECK(r.list().kept.empty());
}

TEST_CASE("change record: sequences that end in one change") {
    struct Case {
        const char* name;
        std::function<void(ChangeRecord&)> steps;
        std::vector<std::string> expected;
    };
    const Case cases[] = {
        {"removed and made again: modified",
         [](ChangeRecord& r) {
             r.removed("/w/f", false);
             r.made("/w/f", false);
         },
         {"modified /w/f"}},
        {"modified, then removed: deleted",
         [](ChangeRecord& r) {
             r.written("/w/f", false);
             r.removed("/w/f", false);
         },
         {"deleted /w/f"}},
        {"a file made, then renamed: written, since the watch cannot tell if it replaced one",
         [](ChangeRecord& r) {
             r.made("/w/f.tmp", false);
             r.renamed("/w/f.tmp", "/w/f", false);
         },
         {"written /w/f"}},
        {"a folder made, then renamed: made under the new name",
         [](ChangeRecord& r) {
             r.made("/w/d.tmp", true);
             r.renamed("/w/d.tmp", "/w/d", true);
         },
         {"created /w/d/"}},
        {"a file removed, then another renamed onto it: modified",
         [](ChangeRecord& r) {
             r.removed("/w/f", false);
             r.made("/w/f.new", false);
             r.renamed("/w/f.new", "/w/f", false);
         },
         {"modified /w/f"}},
        {"written, then removed: deleted",
         [](ChangeRecord& r) {
             r.made("/w/index.lock", false);
             r.renamed("/w/index.lock", "/w/index", false);
             r.removed("/w/index", false);
         },
         {"deleted /w/index"}},
        {"renamed twice: from the first name to the last",
         [](ChangeRecord& r) {
             r.renamed("/w/a", "/w/b", false);
             r.renamed("/w/b", "/w/c", false);
         },
         {"renamed /w/c <- /w/a"}},
        {"renamed, then removed: the old path deleted",
         [](ChangeRecord& r) {
             r.renamed("/w/a", "/w/b", false);
             r.removed("/w/b", false);
         },
         {"deleted /w/a"}},
        {"an existing file written, then renamed: renamed",
         [](ChangeRecord& r) {
             r.written("/w/a", false);
             r.renamed("/w/a", "/w/b", false);
         },
         {"renamed /w/b <- /w/a"}},
        {"a file made over (editor's save): modified once",
         [](ChangeRecord& r) {
             r.made("/w/f.swp", false);
             r.renamed("/w/f", "/w/f~", false);
             r.renamed("/w/f.swp", "/w/f", false);
             r.removed("/w/f~", false);
         },
         {"modified /w/f"}},
    };
    for (const Case& c : cases) {
        CAPTURE(c.name);
        ChangeRecord r;
        c.steps(r);
        CHECK(lines(r.list()) == c.expected);
        CHECK(r.list().count == c.expected.size());
    }
}

TEST_CASE("change record: past the names it keeps, it still counts every path") {
    ChangeRecord r;
    for (int i = 4999; i >= 0; --i) r.made("/w/f" + std::to_string(i), false);
    for (int i = 0; i < 5000; ++i) r.written("/w/f" + std::to_string(i), false);
    const ChangeList list = r.list();
    CHECK(list.count == 5000);
    REQUIRE(list.kept.size() == ChangeRecord::kKept);
    // The shortest of all, whatever order they came in.
    CHECK(list.kept[0].path == "/w/f0");
    CHECK(list.kept[9].path == "/w/f9");
    CHECK(list.kept[10].path == "/w/f10");
    CHECK(list.kept.back().path.size() == std::string("/w/f100").size());
    // A kept path removed again leaves the count right.
    r.removed("/w/f0", false);
    CHECK(r.list().count == 4999);
    CHECK(r.list().kept[0].path == "/w/f1");
}

TEST_CASE("change record: past the paths it tracks, it says the list is incomplete") {
    ChangeRecord r;
    for (size_t i = 0; i < ChangeRecord::kTracked; ++i) r.made("/" + std::to_string(i), false);
    CHECK(r.list().incomplete.empty());
    CHECK(r.full());
    r.made("/one-more", false);
    CHECK(r.list().count == ChangeRecord::kTracked);
    CHECK_THAT(r.list().incomplete, Catch::Contains("more than 1048576 paths changed"));
    r.incomplete("a later reason");
    CHECK_THAT(r.list().incomplete, Catch::Contains("more than 1048576"));
}
