// BwrapLaunch with the real bwrap: it starts before its arguments are known, and must neither
// set anything up nor run its command until it has them all.
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "pty/fd_io.h"
#include "sandbox/cache_layer.h"
#include "sandbox/fresh_sandbox.h"
#include "sandbox/layer_gate.h"
#include "sandbox/layer_mounts.h"
#include "sandbox/network/network_forwarder.h"
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

// What caretz-inside does first as a sandbox's first program (layer_gate.h): hands the
// sandbox's mount namespace over the gate and waits for the go-ahead; then `script`.
std::vector<std::string> through_gate(const std::string& script) {
    return {"/usr/bin/python3", "-c",
            "import os, socket, sys\n"
            "gate = socket.socket(fileno=" +
                std::to_string(kLayerGateFd) +
                ")\n"
                "socket.send_fds(gate, [b'r'], [os.open('/proc/self/ns/mnt', os.O_RDONLY)])\n"
                "if gate.recv(1) != b'g': sys.exit(126)\n"
                "gate.close()\n"
                "os.execv('/bin/sh', ['sh', '-c', sys.argv[1]])\n",
            script};
}

TEST_CASE(
    "the cache layer's overlays are in the sandbox before its first program goes on: the "
    "sandbox writes the cache, the host's folder stays as it was, and the next sandbox finds "
    "what the first wrote",
    "[bwrap][cache_layer]") {
    Launched l;
    // In the workspace, the one folder of the home's that the sandbox sees (the home lies in
    // /tmp, which is the sandbox's own).
    const std::filesystem::path cache = l.workspace / ".cache";
    std::filesystem::create_directory(cache);
    std::ofstream(cache / "old") << "from the host\n";
    CacheLayer& layer = l.policy.cache_layer;
    layer.how = CacheLayer::How::overlay;
    layer.store = (l.home.path() / "store").string();
    layer.folders = {cache.string()};
    REQUIRE(make_cache_store(layer).empty());
    auto run = [&](const std::string& script) {
        // bwrap reads its filter to the end: each gets one of its own.
        UniqueFd seccomp = terminal_injection_filter();
        SpawnOptions options = l.options;
        options.fds = {{seccomp.get(), kSeccompFd}};
        BwrapLaunch bwrap(l.policy, l.workspace.string(), through_gate(script), options);
        const pid_t pid = bwrap.finish({});
        bwrap.cache_layer().put_in();
        return wait_for_exit(pid);
    };
    // Each sandbox gets overlays of its own; the second finds what the first wrote.
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
    Launched l;
    CacheLayer& layer = l.policy.cache_layer;
    layer.how = CacheLayer::How::overlay;
    layer.store = (l.home.path() / "store").string();
    const std::string missing = (l.home.path() / "gone").string();
    layer.folders = {missing};
    REQUIRE(make_cache_store(layer).empty());
    const std::string expected = "cannot mount the private cache layer over " + missing +
                                 " (caretz doctor says more): No such file or directory";
    // Made while bwrap lays the sandbox out, the failure stops the start, and the sandbox,
    // given no go-ahead, has run nothing and is gone.
    {
        BwrapLaunch bwrap(l.policy, l.workspace.string(),
                          through_gate("echo ran > " + l.mark.string()), l.options);
        CHECK_THROWS_WITH(bwrap.finish({}), expected);
    }
    CHECK(no_child_left());
    CHECK_FALSE(std::filesystem::exists(l.mark));
    CHECK_THROWS_WITH(make_layer_mounts(layer), expected);
}

TEST_CASE("a sandbox's first program goes on only once Caretz has put the cache layer in",
          "[cache_layer]") {
    // No gate: no layer to wait for.
    CHECK(LayerGate().passed());
    auto gated = [](char answer) {
        int sockets[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) == 0);
        UniqueFd caretz(sockets[0]);
        REQUIRE(::dup2(sockets[1], kLayerGateFd) == kLayerGateFd);
        ::close(sockets[1]);
        // The sandbox's own mount namespace comes over at once, before the program waits.
        LayerGate gate;
        std::vector<UniqueFd> handed;
        char said[8];
        REQUIRE(receive_with_fds(caretz.get(), said, sizeof said, handed) == 1);
        REQUIRE(handed.size() == 1);
        struct stat ns {
        }, own{};
        CHECK(::fstat(handed[0].get(), &ns) == 0);
        CHECK(::stat("/proc/self/ns/mnt", &own) == 0);
        CHECK(ns.st_ino == own.st_ino);
        if (answer) send_all(caretz.get(), std::string(1, answer));
        caretz.reset();  // no answer: Caretz has gone
        const bool went_on = gate.passed();
        // The gate is closed, and what was decided stays.
        CHECK(::fcntl(kLayerGateFd, F_GETFD) == -1);
        CHECK(gate.passed() == went_on);
        return went_on;
    };
    CHECK(gated('g'));
    CHECK_FALSE(gated(0));
    CHECK_FALSE(gated('x'));
}

TEST_CASE("the per-command forwarder runs its command only after the cache layer's go-ahead",
          "[cache_layer]") {
    for (const bool go_ahead : {true, false}) {
        TempDir dir;
        const std::filesystem::path mark = dir.path() / "ran";
        int gate[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate) == 0);
        UniqueFd caretz(gate[0]);
        const pid_t pid = ::fork();
        if (pid == 0) {
            // A loopback of its own for the proxy port it listens on.
            if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) ::_exit(90);
            ::close(gate[0]);  // Caretz's end, which an exec would have closed
            ::dup2(gate[1], kLayerGateFd);
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, STDERR_FILENO);
            ::_exit(
                run_network_forwarder_command({"/bin/sh", "-c", "echo ran > " + mark.string()}));
        }
        ::close(gate[1]);
        char said[8];
        std::vector<UniqueFd> handed;
        REQUIRE(receive_with_fds(caretz.get(), said, sizeof said, handed) == 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        CHECK_FALSE(std::filesystem::exists(mark));
        if (go_ahead) REQUIRE(send_all(caretz.get(), "g"));
        caretz.reset();
        const int status = wait_for_exit(pid);
        CHECK(status == (go_ahead ? 0 : 126));
        CHECK(std::filesystem::exists(mark) == go_ahead);
    }
}
