#include "sandbox/supervisor_protocol.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

namespace caretz {

namespace {

constexpr size_t kHeader = 5;

bool write_fully(int fd, const char* data, size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

bool send_frame(int fd, Frame type, std::string_view payload) {
    char header[kHeader];
    header[0] = static_cast<char>(type);
    auto len = static_cast<uint32_t>(payload.size());
    for (int i = 0; i < 4; ++i) header[1 + i] = static_cast<char>((len >> (8 * i)) & 0xff);
    std::string frame(header, kHeader);
    frame.append(payload);
    return write_fully(fd, frame.data(), frame.size());
}

bool FrameReader::read_from(int fd) {
    if (consumed_ > 0 && consumed_ == buffer_.size()) {
        buffer_.clear();
        consumed_ = 0;
    }
    char buf[65536];
    ssize_t n;
    do {
        n = ::read(fd, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
}

std::optional<FrameReader::Message> FrameReader::next() {
    if (buffer_.size() - consumed_ < kHeader) return std::nullopt;
    const char* h = buffer_.data() + consumed_;
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i) len |= static_cast<uint32_t>(static_cast<unsigned char>(h[1 + i])) << (8 * i);
    if (buffer_.size() - consumed_ - kHeader < len) return std::nullopt;
    Message m{static_cast<Frame>(h[0]), buffer_.substr(consumed_ + kHeader, len)};
    consumed_ += kHeader + len;
    if (consumed_ > (1u << 20)) {
        buffer_.erase(0, consumed_);
        consumed_ = 0;
    }
    return m;
}

}  // namespace caretz
