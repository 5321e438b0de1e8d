#include "sandbox/network/network_proxy.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "tests/unit/temp_dir.h"

using namespace caretz;
namespace fs = std::filesystem;

namespace {

// A proxy folder in `base` with a socket bound in it; listening while the result lives, or
// (`listening` false) closed at once, as a killed Caretz leaves it.
UniqueFd proxy_folder(const fs::path& base, const std::string& name, bool listening,
                      bool old = true) {
    fs::path folder = base / name;
    fs::create_directory(folder);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::string path = (folder / "proxy.sock").string();
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd.get(), 4) == 0);
    if (!listening) fd.reset();
    if (old)
        fs::last_write_time(folder, fs::file_time_type::clock::now() - std::chrono::minutes(2));
    return fd;
}

}  // namespace

TEST_CASE("Proxy folders of a killed Caretz are removed; live, new and other folders stay",
          "[network_proxy]") {
    TempDir base;
    proxy_folder(base.path(), "caretz-net-dead01", false);
    UniqueFd live = proxy_folder(base.path(), "caretz-net-live01", true);
    proxy_folder(base.path(), "caretz-net-young1", false, false);
    proxy_folder(base.path(), "other-net-dead01", false);
    fs::create_directory(base.path() / "caretz-net-empty1");
    fs::last_write_time(base.path() / "caretz-net-empty1",
                        fs::file_time_type::clock::now() - std::chrono::minutes(2));

    remove_stale_proxy_folders(base.path().string());

    CHECK_FALSE(fs::exists(base.path() / "caretz-net-dead01"));
    CHECK_FALSE(fs::exists(base.path() / "caretz-net-empty1"));
    CHECK(fs::exists(base.path() / "caretz-net-live01" / "proxy.sock"));
    CHECK(fs::exists(base.path() / "caretz-net-young1" / "proxy.sock"));
    CHECK(fs::exists(base.path() / "other-net-dead01" / "proxy.sock"));
}
