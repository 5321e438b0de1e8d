#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace caretz {

// Everything readable from `fd` until its other end is closed (or a read fails).
inline std::string read_to_end(int fd) {
    std::string data;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) data.append(buf, static_cast<size_t>(n));
    return data;
}

// The whole of the file at `path`; empty when it cannot be opened.
inline std::string file_contents(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string data = read_to_end(fd);
    ::close(fd);
    return data;
}

}  // namespace caretz
