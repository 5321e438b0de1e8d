#include "sandbox/host_fs.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/unit/temp_dir.h"

using namespace caretz;
namespace fs = std::filesystem;

TEST_CASE("a path resolves through its links, and only when it is there", "[host_fs]") {
    TempDir dir;
    const fs::path real = dir.path() / "real";
    fs::create_directories(real / "inner");
    fs::create_directory_symlink(real, dir.path() / "link");
    fs::create_symlink(dir.path() / "nowhere", dir.path() / "dangling");

    CHECK(resolved_path((dir.path() / "link/inner").string()) == (real / "inner").string());
    CHECK(resolved_path((dir.path() / "link/inner/../inner").string()) ==
          (real / "inner").string());
    CHECK_FALSE(resolved_path((dir.path() / "link/missing").string()));
    CHECK_FALSE(resolved_path((dir.path() / "dangling").string()));
    CHECK_FALSE(resolved_path((dir.path() / "dangling/below").string()));
    CHECK(RealHostFs().real_path((dir.path() / "link").string()) == real.string());
}

TEST_CASE("a private folder is made for its owner alone, and one that is already is not written",
          "[host_fs]") {
    TempDir dir;
    const fs::path made = dir.path() / "state" / "caretz";
    REQUIRE_FALSE(make_private_folder(made.string()));
    CHECK(fs::status(made).permissions() == fs::perms::owner_all);
    // Its inode is not written again: a chmod would move its change time.
    struct stat before {};
    REQUIRE(::stat(made.c_str(), &before) == 0);
    // File times move by the clock's tick (a jiffy): a chmod right away could leave it as it is.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE_FALSE(make_private_folder(made.string()));
    struct stat after {};
    REQUIRE(::stat(made.c_str(), &after) == 0);
    CHECK(after.st_ctim.tv_sec == before.st_ctim.tv_sec);
    CHECK(after.st_ctim.tv_nsec == before.st_ctim.tv_nsec);
    // One others could read is closed.
    fs::permissions(made, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    REQUIRE_FALSE(make_private_folder(made.string()));
    CHECK(fs::status(made).permissions() == fs::perms::owner_all);
    // A file in the way is an error.
    std::ofstream(dir.path() / "file");
    CHECK(make_private_folder((dir.path() / "file" / "below").string()));
}
