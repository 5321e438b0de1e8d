// BwrapLaunch with the real bwrap: it starts before its arguments are known, and must neither
// set anything up nor run its command until it has them all.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "sandbox/fresh_sandbox.h"
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
    BwrapLaunch bwrap(l.policy, l.workspace.string(), l.command(), l.options);
    const pid_t pid = bwrap.finish({});
    CHECK(wait_for_exit(pid) == 0);
    CHECK(file_contents(l.mark) == "ran\n");
}

TEST_CASE("a bwrap never given its arguments runs nothing and is gone with its launch", "[bwrap]") {
    Launched l;
    {
        BwrapLaunch bwrap(l.policy, l.workspace.string(), l.command(), l.options);
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
    BwrapLaunch bwrap(l.policy, l.workspace.string(), l.command(), l.options);
    // Wait until it has ended (left unreaped), so the arguments meet a closed socket: without
    // MSG_NOSIGNAL this process would die of SIGPIPE here.
    siginfo_t info{};
    REQUIRE(::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) == 0);
    const pid_t pid = bwrap.finish({});
    CHECK(pid == info.si_pid);
    CHECK(wait_for_exit(pid) == 126);
    CHECK_FALSE(std::filesystem::exists(l.mark));
}
