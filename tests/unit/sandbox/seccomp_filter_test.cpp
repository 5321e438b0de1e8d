#include "sandbox/seccomp_filter.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <vector>

#include "pty/pty.h"

using namespace caretz;

namespace {

// Runs `probe` in a child under the filter, the way bwrap loads it, and returns the child's
// exit code: the probe's own answer.
int under_filter(int (*probe)(int), int tty_fd) {
    UniqueFd filter = terminal_injection_filter();
    std::vector<sock_filter> program(4096);
    ssize_t n = ::read(filter.get(), program.data(), program.size() * sizeof(sock_filter));
    REQUIRE(n > 0);
    REQUIRE(n % sizeof(sock_filter) == 0);
    pid_t pid = ::fork();
    if (pid == 0) {
        sock_fprog prog{static_cast<unsigned short>(n / sizeof(sock_filter)), program.data()};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
            ::_exit(100);
        ::_exit(probe(tty_fd));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
}

// 0 when the call failed with EPERM, 1 when it got through, 2 for any other failure.
int verdict(long rc) {
    return rc == 0 ? 1 : errno == EPERM ? 0 : 2;
}

}  // namespace

TEST_CASE("the sandbox's filter refuses TIOCSTI and TIOCLINUX with EPERM") {
    Pty pty = Pty::open({24, 80});
    int tty = pty.slave();
    if (::geteuid() == 0) {
        // The control: root may push input into any terminal, so EPERM below is the filter's.
        char c = 'x';
        REQUIRE(::ioctl(tty, TIOCSTI, &c) == 0);
    }
    CHECK(under_filter(
              [](int fd) {
                  char c = 'x';
                  return verdict(::ioctl(fd, TIOCSTI, &c));
              },
              tty) == 0);
    CHECK(under_filter(
              [](int fd) {
                  char sub = 6;  // TIOCL_PASTESEL: paste the console selection as input
                  return verdict(::ioctl(fd, TIOCLINUX, &sub));
              },
              tty) == 0);
}

TEST_CASE("high bits in the request do not slip TIOCSTI past the filter") {
    Pty pty = Pty::open({24, 80});
    int tty = pty.slave();
    CHECK(under_filter(
              [](int fd) {
                  char c = 'x';
                  return verdict(::syscall(SYS_ioctl, fd, 0x100000000UL | TIOCSTI, &c));
              },
              tty) == 0);
}

TEST_CASE("other ioctls and system calls work under the filter") {
    Pty pty = Pty::open({24, 80});
    int tty = pty.slave();
    CHECK(under_filter(
              [](int fd) {
                  winsize ws{};
                  return verdict(::ioctl(fd, TIOCGWINSZ, &ws)) == 1 && ws.ws_col == 80 ? 1 : 2;
              },
              tty) == 1);
    CHECK(under_filter([](int) { return ::getpid() > 0 ? 1 : 2; }, tty) == 1);
}
