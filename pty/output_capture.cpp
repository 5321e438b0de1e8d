#include "pty/output_capture.h"

#include "pty/vterm_screen.h"

namespace caretz {

namespace {

std::string render(std::string_view bytes, int columns) {
    VtermScreen screen(24, columns, 1 << 20);
    screen.feed(bytes);
    return screen.text();
}

std::string with_final_newline(std::string text) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    return text;
}

}  // namespace

OutputCapture::OutputCapture(int columns, size_t head_bytes, size_t tail_bytes)
    : columns_(columns > 0 ? columns : 80), head_limit_(head_bytes), tail_limit_(tail_bytes) {}

void OutputCapture::append(std::string_view bytes) {
    total_ += bytes.size();
    if (head_.size() < head_limit_) {
        size_t take = std::min(bytes.size(), head_limit_ - head_.size());
        head_.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
    }
    // Amortised: the tail grows to twice its limit before the oldest half is dropped.
    tail_.append(bytes);
    if (tail_.size() > 2 * tail_limit_) tail_.erase(0, tail_.size() - tail_limit_);
}

std::string OutputCapture::text() const {
    std::string tail =
        tail_.size() > tail_limit_ ? tail_.substr(tail_.size() - tail_limit_) : tail_;
    size_t omitted = total_ - head_.size() - tail.size();
    if (omitted == 0) return with_final_newline(render(head_ + tail, columns_));
    // Start the tail at a line boundary so a cut escape sequence or character is not shown.
    size_t newline = tail.find('\n');
    if (newline != std::string::npos) {
        omitted += newline + 1;
        tail.erase(0, newline + 1);
    }
    std::string text = render(head_, columns_);
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += "[... " + std::to_string(omitted) + " bytes of output omitted ...]\n";
    return with_final_newline(text + render(tail, columns_));
}

}  // namespace caretz
