#include "sandbox/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

#include "pty/fd_io.h"
#include "tests/unit/read_to_end.h"

using namespace caretz;

TEST_CASE("a child gets the descriptors it is given, where it is told, and no others", "[spawn]") {
    int data[2];
    REQUIRE(::pipe2(data, O_CLOEXEC) == 0);
    UniqueFd data_read(data[0]);
    REQUIRE(write_all(data[1], "through fd 5\n"));
    ::close(data[1]);
    // Not close-on-exec, as a library might leave one: the child must not get it either.
    UniqueFd stray(::fcntl(data_read.get(), F_DUPFD, 40));
    REQUIRE(stray.get() >= 40);
    SpawnOptions options;
    options.fds = {{data_read.get(), 5}};
    auto out = output_of({"/bin/sh", "-c",
                          "cat <&5; test -e /proc/self/fd/" + std::to_string(stray.get()) +
                              " && echo stray || echo no-stray"},
                         options);
    REQUIRE(out);
    CHECK(*out == "through fd 5\nno-stray\n");
}

TEST_CASE("a child starts with default signal handling and nothing blocked; Caretz's mask stays",
          "[spawn]") {
    // Ignored signals and the mask survive exec (handlers do not): both are Caretz's to reset.
    struct sigaction ignore {
    }, old_pipe{};
    ignore.sa_handler = SIG_IGN;
    REQUIRE(::sigaction(SIGPIPE, &ignore, &old_pipe) == 0);
    // A known mask to start from: SIGUSR1 alone blocked.
    sigset_t usr1, saved, after;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    REQUIRE(::pthread_sigmask(SIG_SETMASK, &usr1, &saved) == 0);

    auto out = output_of({"/bin/sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status"}, {});
    ::pthread_sigmask(SIG_SETMASK, &saved, &after);
    ::sigaction(SIGPIPE, &old_pipe, nullptr);

    REQUIRE(out);
    CHECK(out->find("SigBlk:\t0000000000000000\n") != std::string::npos);
    const auto at = out->find("SigIgn:\t");
    REQUIRE(at != std::string::npos);
    const auto ignored = std::stoull(out->substr(at + 8, 16), nullptr, 16);
    CHECK((ignored & (1ULL << (SIGPIPE - 1))) == 0);
    for (int sig = 1; sig < NSIG; ++sig) {
        CAPTURE(sig);
        CHECK(sigismember(&after, sig) == sigismember(&usr1, sig));
    }
}

namespace {

// The exit status of `argv` started as `options` say, and what it wrote on its stderr.
std::pair<int, std::string> status_and_stderr(const std::vector<std::string>& argv,
                                              SpawnOptions options) {
    int err[2];
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    UniqueFd err_read(err[0]);
    options.stderr_fd = err[1];
    const pid_t pid = spawn_process(argv, options);
    ::close(err[1]);
    REQUIRE(pid > 0);
    const int status = wait_for_exit(pid);
    return {status, read_to_end(err_read.get())};
}

}  // namespace

TEST_CASE("a program that cannot be run ends with 127 and says why", "[spawn]") {
    const auto [status, said] = status_and_stderr({"/nonexistent/caretz-test-program"}, {});
    CHECK(status == 127);
    CHECK(said ==
          "caretz: cannot run /nonexistent/caretz-test-program: No such file or directory\n");
}

TEST_CASE("a child starts in the first of its folders that it can enter", "[spawn]") {
    SpawnOptions options;
    options.cwd = {"/nonexistent/caretz-test", "/tmp", "/"};
    CHECK(output_of({"/bin/pwd"}, options) == "/tmp\n");
    options.cwd = {"/nonexistent/caretz-test"};
    CHECK(wait_for_exit(spawn_process({"/bin/true"}, options)) == 126);
}

TEST_CASE("threads may start children at the same time", "[spawn]") {
    // The child of one runs in Caretz's memory until its exec while the other thread goes on.
    auto starts = [](std::string word, std::vector<std::string>& seen) {
        for (int i = 0; i < 40; ++i) {
            auto out = output_of({"/bin/echo", word + std::to_string(i)}, {});
            seen.push_back(out.value_or("(none)"));
        }
    };
    std::vector<std::string> a, b;
    std::thread other(starts, "a", std::ref(a));
    starts("b", b);
    other.join();
    REQUIRE(a.size() == 40);
    REQUIRE(b.size() == 40);
    for (int i = 0; i < 40; ++i) {
        CHECK(a[i] == "a" + std::to_string(i) + "\n");
        CHECK(b[i] == "b" + std::to_string(i) + "\n");
    }
}
