#include "escalation/host_probe.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

using caretz::RealHostProbe;

namespace {

namespace fs = std::filesystem;

// A scratch directory removed again at the end of the test.
struct ScratchDir {
    fs::path path;

    ScratchDir() {
        char name[] = "/tmp/caretz-host-probe-XXXXXX";
        REQUIRE(mkdtemp(name) != nullptr);
        path = name;
    }
    ~ScratchDir() { fs::remove_all(path); }
};

void make_socket(const fs::path& path) {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    REQUIRE(bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
    close(fd);
}

// Runs `probe` in a child process and returns its exit status, so a test may change the
// child's ids or mounts without touching the test's own.
template <typename Probe>
int in_child(Probe probe) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) _exit(probe());
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
}

constexpr int kSkipped = 77;

}  // namespace

TEST_CASE("RealHostProbe follows symlinks, as the command would", "[host_probe]") {
    const ScratchDir dir;
    const RealHostProbe host;
    std::ofstream(dir.path / "file") << "x";
    make_socket(dir.path / "daemon.sock");
    fs::create_symlink(dir.path / "daemon.sock", dir.path / "link.sock");
    fs::create_symlink(dir.path / "gone", dir.path / "dangling");

    CHECK(host.exists((dir.path / "file").string()));
    CHECK_FALSE(host.exists((dir.path / "missing").string()));
    CHECK_FALSE(host.exists((dir.path / "dangling").string()));
    CHECK(host.is_socket((dir.path / "daemon.sock").string()));
    CHECK(host.is_socket((dir.path / "link.sock").string()));
    CHECK_FALSE(host.is_socket((dir.path / "file").string()));
    CHECK_FALSE(host.is_socket((dir.path / "missing").string()));
}

TEST_CASE("RealHostProbe asks the nearest existing directory about new paths", "[host_probe]") {
    const ScratchDir dir;
    const RealHostProbe host;
    CHECK(host.may_write(dir.path.string()));
    CHECK(host.may_write((dir.path / "new" / "deeper" / "file").string()));
    if (geteuid() != 0) CHECK_FALSE(host.may_write("/new-top-level-dir/file"));
}

TEST_CASE("RealHostProbe: the host refuses what the user may not write there either",
          "[host_probe]") {
    const ScratchDir dir;
    const RealHostProbe host;
    const fs::path locked = dir.path / "locked";
    const fs::path unsearchable = dir.path / "unsearchable";
    fs::create_directory(locked);
    fs::create_directory(unsearchable);
    std::ofstream(dir.path / "read-only-file") << "x";
    REQUIRE(chmod(locked.c_str(), 0555) == 0);
    REQUIRE(chmod(unsearchable.c_str(), 0666) == 0);
    REQUIRE(chmod((dir.path / "read-only-file").c_str(), 0444) == 0);
    // As someone other than the owner, whatever the test runs as: root ignores modes.
    const int answers = in_child([&] {
        if (geteuid() == 0 && (chown(dir.path.c_str(), 65534, 65534) != 0 || setgid(65534) != 0 ||
                               setuid(65534) != 0))
            return 1;
        const bool right =
            host.may_write(dir.path / "new") && !host.may_write(locked / "new" / "deeper") &&
            !host.may_write(unsearchable / "new") && !host.may_write(dir.path / "read-only-file") &&
            host.may_write(dir.path / "gone" / "deeper");
        return right ? 0 : 2;
    });
    CHECK(answers == 0);
}

TEST_CASE("RealHostProbe asks with the effective user, as open(2) does", "[host_probe]") {
    if (geteuid() != 0) {
        WARN("skipped: only root can run with another effective user");
        return;
    }
    const ScratchDir dir;
    const RealHostProbe host;
    REQUIRE(chmod(dir.path.c_str(), 0755) == 0);
    // Real user root, effective user nobody: plain access(2) would say root may write.
    const int answer = in_child([&] {
        if (setegid(65534) != 0 || seteuid(65534) != 0) return 1;
        return host.may_write((dir.path / "new").string()) ? 2 : 0;
    });
    CHECK(answer == 0);
}

TEST_CASE("RealHostProbe: a read-only mount of the host refuses even root", "[host_probe]") {
    const ScratchDir dir;
    const RealHostProbe host;
    const fs::path mounted = dir.path / "ro";
    fs::create_directory(mounted);
    const int answer = in_child([&] {
        const int flags = geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS;
        if (unshare(flags) != 0) return kSkipped;
        if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            mount("tmpfs", mounted.c_str(), "tmpfs", MS_RDONLY, nullptr) != 0)
            return kSkipped;
        const bool right = !host.may_write(mounted / "new") && host.may_write(dir.path / "new");
        return right ? 0 : 2;
    });
    if (answer == kSkipped) {
        WARN("skipped: no mount namespace for this user");
        return;
    }
    CHECK(answer == 0);
}
