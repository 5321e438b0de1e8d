#include "escalation/output_lines.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace caretz {

namespace {

constexpr unsigned char kEscape = 0x1b;
constexpr unsigned char kBell = 0x07;

// Bytes that are simply shown: printable ASCII, tab and every byte of a UTF-8 sequence. 8-bit C1
// controls are not interpreted, because in UTF-8 output those bytes are continuation bytes.
bool is_shown(unsigned char c) {
    return (c >= 0x20 && c != 0x7f) || c == '\t';
}

// Where the run of shown bytes from `from` ends. Eight bytes at a time while none of them is
// below 0x20 or 0x7f (the usual case: whole lines of text), then byte by byte.
std::size_t shown_run_end(std::string_view bytes, std::size_t from) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHigh = 0x8080808080808080ull;
    std::size_t i = from;
    for (; i + 8 <= bytes.size(); i += 8) {
        uint64_t word;
        std::memcpy(&word, bytes.data() + i, 8);
        const uint64_t below_space = (word - kOnes * 0x20) & ~word & kHigh;
        const uint64_t del = word ^ (kOnes * 0x7f);
        if (below_space | ((del - kOnes) & ~del & kHigh)) break;
    }
    while (i < bytes.size() && is_shown(static_cast<unsigned char>(bytes[i]))) ++i;
    return i;
}

}  // namespace

OutputLines::OutputLines(LineCallback on_line) : on_line_(std::move(on_line)) {
    line_.reserve(256);
}

void OutputLines::feed(std::string_view bytes) {
    std::size_t i = 0;
    while (i < bytes.size()) {
        if (state_ == State::text) {
            const std::size_t run = shown_run_end(bytes, i);
            if (run > i) {
                put_text(bytes.substr(i, run - i));
                i = run;
                continue;
            }
        }
        step(static_cast<unsigned char>(bytes[i++]));
    }
}

void OutputLines::step(unsigned char c) {
    switch (state_) {
        case State::text:
            control(c);
            break;
        case State::escape:
            escape(c);
            break;
        case State::escape_intermediate:
            if (c >= 0x20 && c <= 0x2f) break;
            state_ = State::text;
            if (c < 0x20) control(c);  // a control byte cancels the sequence and still acts
            break;
        case State::csi:
            csi(c);
            break;
        case State::osc:
            if (c == kBell) state_ = State::text;
            if (c == kEscape) state_ = State::osc_escape;
            break;
        case State::osc_escape:
            state_ = c == '\\' ? State::text : State::osc;
            break;
        case State::control_string:
            if (c == kEscape) state_ = State::control_string_escape;
            break;
        case State::control_string_escape:
            state_ = c == '\\' ? State::text : State::control_string;
            break;
    }
}

void OutputLines::finish() {
    if (!line_.empty()) end_line();
    line_.clear();
    column_ = 0;
    state_ = State::text;
}

void OutputLines::put_text(std::string_view bytes) {
    if (column_ >= kMaxLineBytes) return;
    const std::size_t n = std::min(bytes.size(), kMaxLineBytes - column_);
    if (column_ > line_.size()) line_.resize(column_, ' ');
    const std::size_t overlap = std::min(n, line_.size() - column_);
    line_.replace(column_, overlap, bytes.data(), overlap);
    line_.append(bytes.data() + overlap, n - overlap);
    column_ += n;
}

void OutputLines::control(unsigned char c) {
    switch (c) {
        case '\n':
            end_line();
            break;
        case '\r':
            column_ = 0;
            break;
        case '\b':
            if (column_ > 0) --column_;
            break;
        case kEscape:
            state_ = State::escape;
            break;
        default:
            break;  // BEL, SO/SI and the like show nothing
    }
}

void OutputLines::escape(unsigned char c) {
    switch (c) {
        case '[':
            state_ = State::csi;
            csi_param_ = 0;
            csi_first_ = true;
            csi_private_ = false;
            return;
        case ']':
            state_ = State::osc;
            return;
        case 'P':
        case 'X':
        case '^':
        case '_':
            state_ = State::control_string;
            return;
        default:
            break;
    }
    if (c >= 0x20 && c <= 0x2f) {
        state_ = State::escape_intermediate;
    } else {
        state_ = State::text;
        if (c < 0x20) control(c);  // ESC ESC starts a new sequence; a newline ends the line
    }
}

void OutputLines::csi(unsigned char c) {
    if (c >= 0x40 && c <= 0x7e) {
        state_ = State::text;
        if (!csi_private_) run_csi(c);
    } else if (c >= '0' && c <= '9') {
        if (csi_first_) csi_param_ = std::min(csi_param_ * 10 + (c - '0'), 100000u);
    } else if (c == ';' || c == ':') {
        csi_first_ = false;
    } else if (c >= 0x3c && c <= 0x3f) {
        csi_private_ = true;
    } else if (c < 0x20) {
        // A control byte inside a sequence is acted on; a newline must still end the line.
        state_ = State::text;
        control(c);
    }
}

void OutputLines::run_csi(unsigned char final_byte) {
    const std::size_t count = std::max(csi_param_, 1u);
    switch (final_byte) {
        case 'K':  // erase in line: 0 to the end, 1 to the start, 2 all
            if (csi_param_ == 0 && column_ < line_.size()) line_.resize(column_);
            if (csi_param_ == 1)
                std::fill_n(line_.begin(), std::min(column_ + 1, line_.size()), ' ');
            if (csi_param_ == 2) line_.assign(std::min(column_, kMaxLineBytes), ' ');
            break;
        case 'G':  // cursor to column N (1-based)
            move_to(count - 1);
            break;
        case 'C':  // cursor forward
            move_to(column_ + count);
            break;
        case 'D':  // cursor back
            move_to(column_ > count ? column_ - count : 0);
            break;
        default:
            break;
    }
}

void OutputLines::move_to(std::size_t column) {
    column_ = std::min(column, kMaxLineBytes);
}

void OutputLines::end_line() {
    on_line_(line_);
    line_.clear();
    column_ = 0;
}

}  // namespace caretz
