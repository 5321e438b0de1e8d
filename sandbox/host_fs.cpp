#include "sandbox/host_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

namespace caretz {

namespace {

HostFs::Type type_of(mode_t mode) {
    if (S_ISDIR(mode)) return HostFs::Type::directory;
    if (S_ISREG(mode)) return HostFs::Type::file;
    if (S_ISLNK(mode)) return HostFs::Type::symlink;
    if (S_ISSOCK(mode)) return HostFs::Type::socket;
    return HostFs::Type::other;
}

}  // namespace

std::error_code make_private_folder(const std::string& path) {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    if (error) return error;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {errno, std::generic_category()};
    if ((st.st_mode & 07777) != 0700 && ::chmod(path.c_str(), 0700) != 0)
        return {errno, std::generic_category()};
    return {};
}

bool create_empty_path(const std::string& path, HostFs::Type type) {
    if (type == HostFs::Type::directory) {
        if (::mkdir(path.c_str(), 0777) == 0) return true;
    } else {
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            ::close(fd);
            return true;
        }
    }
    // Made meanwhile (by another Caretz starting here): it exists, so it will be bound.
    return errno == EEXIST && RealHostFs().type(path) == type;
}

HostFs::Type RealHostFs::type(const std::string& path) const {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return Type::missing;
    return type_of(st.st_mode);
}

std::vector<HostFs::Entry> RealHostFs::list(const std::string& dir) const {
    std::vector<Entry> entries;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return entries;
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        entries.push_back({name, type(prefix + name)});
    }
    ::closedir(d);
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return entries;
}

std::string RealHostFs::read_link(const std::string& path) const {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

std::optional<std::string> resolved_path(const std::string& path) {
    // Most paths asked about (credential stores, programs in each folder of $PATH) are not
    // there, or not for this user: one lstat says so, where realpath would read every folder
    // on the way as a link before it failed the same way.
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
    char buf[PATH_MAX];
    // The kernel's own name for what the path opens: three calls, where realpath reads every
    // folder on the way as a link. realpath where /proc is not mounted.
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
    ::close(fd);
    if (n > 0 && n < static_cast<ssize_t>(sizeof buf) && buf[0] == '/')
        return std::string(buf, static_cast<size_t>(n));
    if (!::realpath(path.c_str(), buf)) return std::nullopt;
    return std::string(buf);
}

std::optional<std::string> RealHostFs::real_path(const std::string& path) const {
    return resolved_path(path);
}

std::string RealHostFs::read_start(const std::string& path, size_t max) const {
    // O_NONBLOCK: a FIFO planted where a file was expected must not stop Caretz's start.
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return "";
    struct stat st;
    std::string text;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        text.resize(max);
        ssize_t n;
        while ((n = ::read(fd, text.data(), max)) < 0 && errno == EINTR) {
        }
        text.resize(n < 0 ? 0 : static_cast<size_t>(n));
    }
    ::close(fd);
    return text;
}

}  // namespace caretz
