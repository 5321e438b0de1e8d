#pragma once

#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace caretz {

// Writes all of `data` to a blocking descriptor, retrying after signals; false when the
// descriptor stopped taking bytes (closed pipe, error).
inline bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

}  // namespace caretz
