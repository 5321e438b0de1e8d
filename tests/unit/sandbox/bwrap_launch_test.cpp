// BwrapLaunch with the real bwrap: it starts before its arguments are known, and must neither
// set anything up nor run its command until it has them all.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "sandbox/cache_layer.h"
#include "sandbox/fresh_sandbox.h"
#include "sandbox/layer_namespaces.h"
#include "sandbox/policy.h"
#include "sandbox/seccomp_filter.h"
#include "tests/unit/read_to_end.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;

namespace {

// A workspace the sandbox may write, and a command that leaves a mark in it.
struct Launched {
    TempDir home;
    std::filesystem::path workspace = home.path() / "ws";
    std::filesystem::path mark = workspace / "mark";
    SandboxPolicy policy;
    UniqueFd seccomp = terminal_injection_filter();
    UniqueFd null_fd{::open("/dev/null", O_RDWR | O_CLOEXEC)};
    SpawnOptions options;

    Launched() {
        std::filesystem::create_directory(workspace);
        policy = make_policy({}, home.path().string(), workspace.string(), {});
        options.stdin_fd = options.stdout_fd = options.stderr_fd = null_fd.get();
        options.fds = {{seccomp.get(), kSeccompFd}};
    }
    std::vector<std::string> command() const {
        return {"/bin/sh", "-c", "echo ran > " + mark.string()};
    }
};

// Whether any child of this process is left, reaped or not.
bool no_child_left() {
    return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

}  // namespace

TEST_CASE("a launched bwrap runs its command in the sandbox once it has its arguments", "[bwrap]") {
    Launched l;
    BwrapLaunch bwrap(l.policy, l.workspace.string(), l.command(), l.options, nullptr);
    const pid_t pid = bwrap.finish({});
    CHECK(wait_for_exit(pid) == 0);
    CHECK(file_contents(l.mark) == "ran\n");
}

TEST_CASE("a bwrap never given its arguments runs nothing and is gone with its launch", "[bwrap]") {
    Launched l;
    {
        BwrapLaunch bwrap(l.policy, l.workspace.string(), l.command(), l.options, nullptr);
        // Long enough for bwrap to have started and be waiting on its arguments.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    CHECK(no_child_left());
    CHECK_FALSE(std::filesystem::exists(l.mark));
}

TEST_CASE("a bwrap that ended before its arguments came is reported, not a crash of Caretz",
          "[bwrap]") {
    Launched l;
    l.options.cwd = {(l.home.path() / "missing").string()};  // the child exits with 126
    BwrapLaunch bwrap(l.policy, l.workspace.string(), l.command(), l.options, nullptr);
    // Wait until it has ended (left unreaped), so the arguments meet a closed socket: without
    // MSG_NOSIGNAL this process would die of SIGPIPE here.
    siginfo_t info{};
    REQUIRE(::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) == 0);
    const pid_t pid = bwrap.finish({});
    CHECK(pid == info.si_pid);
    CHECK(wait_for_exit(pid) == 126);
    CHECK_FALSE(std::filesystem::exists(l.mark));
}

TEST_CASE(
    "bwrap starts in the cache layer's namespaces: the sandbox writes the cache, the host's "
    "folder stays as it was, and the next sandbox finds what the first wrote",
    "[bwrap][cache_layer]") {
    Launched l;
    const std::filesystem::path cache = l.home.path() / ".cache";
    std::filesystem::create_directory(cache);
    std::ofstream(cache / "old") << "from the host\n";
    CacheLayer& layer = l.policy.cache_layer;
    layer.how = CacheLayer::How::overlay;
    layer.store = (l.home.path() / "store").string();
    layer.folders = {cache.string()};
    REQUIRE(make_cache_store(layer).empty());
    LayerNamespacesAhead ahead(layer);
    auto run = [&](const std::string& script) {
        // bwrap reads its filter to the end: each gets one of its own.
        UniqueFd seccomp = terminal_injection_filter();
        SpawnOptions options = l.options;
        options.fds = {{seccomp.get(), kSeccompFd}};
        BwrapLaunch bwrap(l.policy, l.workspace.string(), {"/bin/sh", "-c", script}, options,
                          &ahead);
        return wait_for_exit(bwrap.finish({}));
    };
    // The first takes the namespaces made ahead; the second makes its own as it starts.
    CHECK(run("cat " + (cache / "old").string() + " > " + l.mark.string() + " && echo new > " +
              (cache / "new").string()) == 0);
    CHECK(file_contents(l.mark) == "from the host\n");
    CHECK_FALSE(std::filesystem::exists(cache / "new"));
    CHECK(file_contents(cache_upper_folder(layer, cache.string()) + "/new") == "new\n");
    CHECK(run("cat " + (cache / "new").string() + " > " + l.mark.string()) == 0);
    CHECK(file_contents(l.mark) == "new\n");
    CHECK(clear_cache_store(layer.store).empty());
}

TEST_CASE("a cache layer that cannot be mounted stops the start and says where and why",
          "[bwrap][cache_layer]") {
    TempDir dir;
    CacheLayer layer;
    layer.how = CacheLayer::How::overlay;
    layer.store = (dir.path() / "store").string();
    const std::string missing = (dir.path() / "gone").string();
    layer.folders = {missing};
    REQUIRE(make_cache_store(layer).empty());
    const std::string expected = "cannot mount the private cache layer over " + missing +
                                 " (caretz doctor says more): No such file or directory";
    LayerNamespacesAhead ahead(layer);
    // Made ahead, on a thread of its own, the failure reaches the start all the same.
    CHECK_THROWS_WITH(ahead.take(), expected);
    CHECK_THROWS_WITH(ahead.take(), expected);
    CHECK_THROWS_WITH(make_layer_namespaces(layer), expected);
}
