#include "sandbox/run_watch.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "sandbox/spawn.h"
#include "tests/unit/sandbox/fake_host_fs.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;
namespace fs = std::filesystem;

namespace {

// Points $XDG_RUNTIME_DIR at a folder of the test's own while it lives.
struct RuntimeDir {
    TempDir dir;
    std::string saved;
    bool had;

    RuntimeDir() {
        const char* old = std::getenv("XDG_RUNTIME_DIR");
        had = old != nullptr;
        if (had) saved = old;
        ::setenv("XDG_RUNTIME_DIR", dir.path().c_str(), 1);
    }
    ~RuntimeDir() {
        if (had) {
            ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
        } else {
            ::unsetenv("XDG_RUNTIME_DIR");
        }
    }
};

// The host path bwrap is told to bind at kRunRecordsPath.
std::string records_path(const RunWatch& watch) {
    const FakeHostFs host(std::map<std::string, std::string>{});
    const auto args = watch.bwrap_arguments(SandboxPolicy{}, host, "/proc/self/fd/5");
    REQUIRE(args.size() == 3);
    CHECK(args[2] == kRunRecordsPath);
    return args[1];
}

void append(const std::string& path, const ProgramRun& record) {
    std::ofstream(path, std::ios::app) << encode_program_run(record);
}

}  // namespace

TEST_CASE("the watch hands over each command's records once", "[run_watch]") {
    RuntimeDir runtime;
    auto watch = RunWatch::create({});
    REQUIRE(watch);
    const std::string path = records_path(*watch);
    CHECK(path.starts_with(runtime.dir.path().string() + "/caretz-runs-"));
    CHECK((fs::status(fs::path(path).parent_path()).permissions() & fs::perms::all) ==
          fs::perms::owner_all);

    const ProgramRun first{"sudo", "/w", {"sudo", "-n", "true"}};
    const ProgramRun second{"kubectl", "/w/app", {"kubectl", "get", "pods"}};
    append(path, first);
    append(path, second);
    CHECK(watch->take() == std::vector<ProgramRun>{first, second});
    CHECK(watch->take().empty());  // emptied: the next command starts with none

    append(path, first);  // say, a background job's, between commands
    watch->discard();
    CHECK(watch->take().empty());
}

TEST_CASE("the records file's name leaves the host once bwrap has it", "[run_watch]") {
    RuntimeDir runtime;
    std::string path;
    {
        auto watch = RunWatch::create({});
        REQUIRE(watch);
        path = records_path(*watch);
        REQUIRE(fs::exists(path));
        watch->forget_path();
        CHECK_FALSE(fs::exists(path));
        CHECK_FALSE(fs::exists(fs::path(path).parent_path()));
    }
    auto dropped = RunWatch::create({});
    REQUIRE(dropped);
    path = records_path(*dropped);
    dropped.reset();  // never started: the destructor tidies up as well
    CHECK_FALSE(fs::exists(fs::path(path).parent_path()));
}

TEST_CASE("a new process folder clears the ones that ended processes left behind", "[run_watch]") {
    RuntimeDir runtime;
    const pid_t gone = ::fork();
    if (gone == 0) ::_exit(0);
    REQUIRE(gone > 0);
    REQUIRE(::waitpid(gone, nullptr, 0) == gone);
    const fs::path base = runtime.dir.path();
    const fs::path left = base / ("caretz-test-" + std::to_string(gone) + "-abcdef");
    const fs::path live = base / ("caretz-test-" + std::to_string(::getpid()) + "-ghijkl");
    const fs::path other = base / ("caretz-other-" + std::to_string(gone) + "-mnopqr");
    for (const auto& folder : {left, live, other}) {
        fs::create_directory(folder);
        std::ofstream(folder / "file") << "x";
    }

    auto made = new_process_folder("caretz-test-", "file");
    REQUIRE(made);
    CHECK(fs::path(*made).parent_path() == base);
    CHECK(fs::path(*made).filename().string().starts_with("caretz-test-" +
                                                          std::to_string(::getpid()) + "-"));
    CHECK(fs::is_directory(*made));
    CHECK_FALSE(fs::exists(left));      // its process has ended
    CHECK(fs::exists(live / "file"));   // this process is alive
    CHECK(fs::exists(other / "file"));  // another kind of folder
}
