#include "sandbox/host_fs.h"

#include <catch2/catch.hpp>
#include <filesystem>

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
