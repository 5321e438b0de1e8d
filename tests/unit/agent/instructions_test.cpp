#include "agent/instructions.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "tests/unit/temp_dir.h"

using namespace caretz;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("instructions: machine, user, then the repository from its top down to the folder",
          "[instructions]") {
    TempDir tmp;
    const fs::path etc = tmp.path() / "etc", user = tmp.path() / "config";
    const fs::path repo = tmp.path() / "repo", deep = repo / "services" / "db";
    fs::create_directories(repo / ".git");
    write(repo / ".git" / "HEAD", "ref: refs/heads/main\n");
    // An empty .git folder (a mount point some sandbox left) is no repository's top.
    fs::create_directories(deep / ".git");
    write(etc / "AGENTS.md", "machine: page the on-call first\n");
    write(user / "AGENTS.md", "user: answer briefly");
    write(repo / "AGENTS.md", "repo: run make check\n");
    write(deep / "AGENTS.md", "db: never drop tables\n");
    write(tmp.path() / "AGENTS.md", "above the repository: not read\n");

    Instructions in = load_instructions(etc, user, deep.string());
    REQUIRE(in.files.size() == 4);
    CHECK(in.files[0].path == (etc / "AGENTS.md").string());
    CHECK(in.files[3].path == (deep / "AGENTS.md").string());
    const size_t machine = in.text.find("machine: page"), mine = in.text.find("user: answer"),
                 top = in.text.find("repo: run"), db = in.text.find("db: never");
    CHECK(machine < mine);
    CHECK(mine < top);
    CHECK(top < db);
    CHECK(db != std::string::npos);
    CHECK(in.text.find("above the repository") == std::string::npos);
    CHECK(in.text.find("--- " + (repo / "AGENTS.md").string() + " ---\n") != std::string::npos);

    // Outside a repository only the folder itself counts.
    const fs::path loose = tmp.path() / "loose" / "sub";
    write(loose / "AGENTS.md", "loose\n");
    write(loose.parent_path() / "AGENTS.md", "parent\n");
    Instructions outside = load_instructions(tmp.path() / "none", tmp.path() / "none", loose);
    REQUIRE(outside.files.size() == 1);
    CHECK(outside.text.find("parent") == std::string::npos);
}

TEST_CASE("instructions: bounded, with a note where cut; no FIFO blocks the start",
          "[instructions]") {
    TempDir tmp;
    write(tmp.path() / "etc" / "AGENTS.md", std::string(3000, 'a'));
    write(tmp.path() / "ws" / "AGENTS.md", std::string(3000, 'b'));
    Instructions in = load_instructions(tmp.path() / "etc", tmp.path() / "none",
                                        (tmp.path() / "ws").string(), 4000);
    REQUIRE(in.files.size() == 2);
    CHECK(in.files[0].used == 3000);
    CHECK(in.files[1].bytes == 3000);
    CHECK(in.files[1].used == 1000);
    CHECK(in.text.find("[Caretz: cut here;") != std::string::npos);

    fs::create_directories(tmp.path() / "fifo");
    REQUIRE(::mkfifo((tmp.path() / "fifo" / "AGENTS.md").c_str(), 0600) == 0);
    Instructions none =
        load_instructions(tmp.path() / "x", tmp.path() / "y", (tmp.path() / "fifo").string());
    CHECK(none.files.empty());
    CHECK(none.text.empty());
}
