#pragma once

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

}  // namespace caretz
