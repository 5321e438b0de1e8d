#include "escalation/host_probe.h"

#include <sys/socket.h>
#include <sys/un.h>
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
