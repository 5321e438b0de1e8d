#include "pty/output_capture.h"

#include "pty/vterm_screen.h"

namespace caretz {

namespace {

// Printable ASCII with plain line ends renders to itself; most command output is like that,
// and libvterm is slow next to a copy.
bool plain_text(std::string_view bytes) {
    for (size_t i = 0; i < bytes.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(bytes[i]);
        if (c == '\r' && i + 1 < bytes.size() && bytes[i + 1] == '\n') continue;
        if (c != '\n' && (c < 0x20 || c > 0x7e)) return false;
    }
    return true;
}

// What VtermScreen::text() gives for plain text: lines without trailing spaces, each ending in
// a newline, no empty lines at the end.
std::string render_plain(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    size_t start = 0;
    while (start < bytes.size()) {
        size_t end = bytes.find('\n', start);
        if (end == std::string_view::npos) end = bytes.size();
        std::string_view line = bytes.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
        out.append(line);
        out += '\n';
        start = end + 1;
    }
    while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
        out.pop_back();
    if (out == "\n") out.clear();
    return out;
}

// Output from a pipe has bare newlines; a terminal's ONLCR would have put a carriage return
// before each, and without one libvterm draws a staircase.
std::string with_carriage_returns(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() + bytes.size() / 16);
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] == '\n' && (i == 0 || bytes[i - 1] != '\r')) out += '\r';
        out += bytes[i];
    }
    return out;
}

std::string render(std::string_view bytes, int columns) {
    if (plain_text(bytes)) return render_plain(bytes);
    VtermScreen screen(24, columns, 1 << 20);
    screen.feed(with_carriage_returns(bytes));
    return screen.text();
}

std::string with_final_newline(std::string text) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    return text;
}

}  // namespace

OutputCapture::OutputCapture(int columns, size_t head_bytes, size_t tail_bytes)
    : columns_(columns > 0 ? columns : 80), head_limit_(head_bytes), tail_(tail_bytes) {}

void OutputCapture::append(std::string_view bytes) {
    total_ += bytes.size();
    if (head_.size() < head_limit_) {
        size_t take = std::min(bytes.size(), head_limit_ - head_.size());
        head_.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
    }
    tail_.append(bytes);
}

std::string OutputCapture::text() const {
    std::string tail(tail_.view());
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
