#include "sandbox/supervisor_protocol.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "pty/fd_io.h"

namespace caretz {

namespace {

constexpr size_t kHeader = 5;

std::string frame_bytes(Frame type, std::string_view payload) {
    char header[kHeader];
    header[0] = static_cast<char>(type);
    auto len = static_cast<uint32_t>(payload.size());
    for (int i = 0; i < 4; ++i) header[1 + i] = static_cast<char>((len >> (8 * i)) & 0xff);
    std::string frame(header, kHeader);
    frame.append(payload);
    return frame;
}

}  // namespace

bool send_frame(int fd, Frame type, std::string_view payload) {
    return write_all(fd, frame_bytes(type, payload));
}

bool send_frame(int fd, Frame type, std::string_view payload, const std::vector<int>& fds) {
    if (fds.empty() || fds.size() > kMaxPassedFds)
        return fds.empty() && send_frame(fd, type, payload);
    const std::string frame = frame_bytes(type, payload);
    // The descriptors go with the frame's first byte; the rest follows as usual.
    return send_with_fds(fd, std::string_view(frame).substr(0, 1), fds.data(), fds.size()) == 1 &&
           write_all(fd, std::string_view(frame).substr(1));
}

std::string encode_job_report(const JobReport& report) {
    // "STATE STATUS BYTES HEADLEN\n", then the head, then the tail.
    std::string text = std::to_string(static_cast<int>(report.state)) + " " +
                       std::to_string(report.status) + " " + std::to_string(report.output_bytes) +
                       " " + std::to_string(report.output_head.size()) + "\n";
    return text + report.output_head + report.output_tail;
}

std::optional<JobReport> decode_job_report(std::string_view payload) {
    auto newline = payload.find('\n');
    if (newline == std::string_view::npos) return std::nullopt;
    int state = -1;
    int status = 0;
    unsigned long long bytes = 0;
    size_t head = 0;
    std::string header(payload.substr(0, newline));
    if (std::sscanf(header.c_str(), "%d %d %llu %zu", &state, &status, &bytes, &head) != 4 ||
        state < 0 || state > static_cast<int>(JobReport::State::killed) ||
        head > payload.size() - newline - 1)
        return std::nullopt;
    JobReport report;
    report.state = static_cast<JobReport::State>(state);
    report.status = status;
    report.output_bytes = bytes;
    report.output_head = std::string(payload.substr(newline + 1, head));
    report.output_tail = std::string(payload.substr(newline + 1 + head));
    return report;
}

std::vector<std::string> split_payload(std::string_view payload) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t end; (end = payload.find('\0', start)) != std::string_view::npos; start = end + 1)
        parts.emplace_back(payload.substr(start, end - start));
    parts.emplace_back(payload.substr(start));
    return parts;
}

bool FrameReader::read_from(int fd) {
    char buf[65536];
    ssize_t n;
    do {
        n = ::read(fd, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    return append(n, buf);
}

bool FrameReader::read_with_fds_from(int fd) {
    char buf[65536];
    return append(receive_with_fds(fd, buf, sizeof buf, fds_), buf);
}

bool FrameReader::append(ssize_t n, const char* buf) {
    if (n <= 0) return false;
    if (consumed_ > 0 && consumed_ == buffer_.size()) {
        buffer_.clear();
        consumed_ = 0;
    }
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
}

std::optional<FrameReader::Message> FrameReader::next() {
    if (buffer_.size() - consumed_ < kHeader) return std::nullopt;
    const char* h = buffer_.data() + consumed_;
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i)
        len |= static_cast<uint32_t>(static_cast<unsigned char>(h[1 + i])) << (8 * i);
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
