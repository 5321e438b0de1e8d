#include "pty/escape_splitter.h"

#include <charconv>

namespace caretz {

namespace {

constexpr unsigned char kEsc = 0x1b;
constexpr unsigned char kBel = 0x07;
constexpr unsigned char kCan = 0x18;
constexpr unsigned char kSub = 0x1a;
constexpr unsigned char kDel = 0x7f;
constexpr size_t kMaxCsiParams = 64;

bool is_text(unsigned char c) {
    return c >= 0x20 && c != kDel;
}
bool is_intermediate(unsigned char c) {
    return c >= 0x20 && c <= 0x2f;
}

// Line feed, vertical tab and form feed move down a row; other C0 controls stay on the row.
bool c0_may_change_row(unsigned char c) {
    return c == '\n' || c == '\v' || c == '\f';
}

// Private modes that only change how things look or how keys are sent: application cursor
// keys, cursor blink, cursor visibility, bracketed paste.
bool is_cosmetic_private_mode(std::string_view params) {
    while (!params.empty()) {
        size_t end = params.find_first_of(";:");
        std::string_view number = params.substr(0, end);
        int mode = -1;
        std::from_chars(number.data(), number.data() + number.size(), mode);
        if (mode != 1 && mode != 12 && mode != 25 && mode != 2004) return false;
        if (end == std::string_view::npos) break;
        params.remove_prefix(end + 1);
    }
    return true;
}

}  // namespace

const std::vector<EscapeSplitter::Segment>& EscapeSplitter::split(std::string_view bytes) {
    segments_.clear();
    size_t pos = 0;
    while (pos < bytes.size()) {
        size_t start = pos;
        if (state_ == State::ground && is_text(static_cast<unsigned char>(bytes[pos]))) {
            while (pos < bytes.size() && is_text(static_cast<unsigned char>(bytes[pos]))) ++pos;
            add(bytes.substr(start, pos - start), true, false);
            continue;
        }
        bool may_change_row = false;
        do {
            may_change_row |= step(static_cast<unsigned char>(bytes[pos]));
            ++pos;
        } while (pos < bytes.size() &&
                 !(state_ == State::ground && is_text(static_cast<unsigned char>(bytes[pos]))));
        add(bytes.substr(start, pos - start), false, may_change_row);
    }
    return segments_;
}

void EscapeSplitter::add(std::string_view bytes, bool text, bool may_change_row) {
    segments_.push_back(Segment{bytes, text, may_change_row});
}

bool EscapeSplitter::step(unsigned char c) {
    if (c == 0x00 || c == kDel) return false;
    if (c == kCan || c == kSub) {
        state_ = State::ground;
        return false;
    }
    if (c == kEsc) {
        state_ = state_ == State::string ? State::string_escape : State::escape;
        escape_has_intermediates_ = false;
        escape_has_hash_ = false;
        return false;
    }
    if (c == kBel && state_ == State::string) {
        state_ = State::ground;
        return false;
    }
    // Other C0 controls act at once, even inside a sequence, and leave the state alone.
    if (c < 0x20) return c0_may_change_row(c);

    switch (state_) {
        case State::ground:
            return false;
        case State::string:
            return false;
        case State::string_escape:
            if (c == '\\') {
                state_ = State::ground;
                return false;
            }
            // Anything but ST abandons the string and starts a new escape sequence.
            state_ = State::escape;
            return step_escape(c);
        case State::escape:
            return step_escape(c);
        case State::csi_leader:
        case State::csi_params:
        case State::csi_intermediate:
            return step_csi(c);
    }
    return false;
}

bool EscapeSplitter::step_escape(unsigned char c) {
    if (c == 'P' || c == ']') {
        state_ = State::string;
        return false;
    }
    if (c == '[') {
        state_ = State::csi_leader;
        csi_leader_ = 0;
        csi_has_intermediates_ = false;
        csi_params_.clear();
        return false;
    }
    if (is_intermediate(c)) {
        escape_has_intermediates_ = true;
        escape_has_hash_ |= c == '#';
        return false;
    }
    if (c < 0x30 || c > 0x7e) return false;  // libvterm ignores it and stays in the escape
    state_ = State::ground;
    // ESC # 8 fills the screen; charset designations and the like change nothing on screen.
    if (escape_has_intermediates_) return escape_has_hash_;
    // Index, next line, reverse index, restore cursor, full reset.
    return c == 'D' || c == 'E' || c == 'M' || c == '8' || c == 'c';
}

bool EscapeSplitter::step_csi(unsigned char c) {
    if (state_ == State::csi_leader) {
        if (c >= 0x3c && c <= 0x3f) {
            if (csi_leader_ == 0) csi_leader_ = static_cast<char>(c);
            return false;
        }
        state_ = State::csi_params;
    }
    if (state_ == State::csi_params) {
        if ((c >= '0' && c <= '9') || c == ';' || c == ':') {
            if (csi_params_.size() < kMaxCsiParams) csi_params_.push_back(static_cast<char>(c));
            return false;
        }
        state_ = State::csi_intermediate;
    }
    if (is_intermediate(c)) {
        csi_has_intermediates_ = true;
        return false;
    }
    state_ = State::ground;
    if (c < 0x40 || c > 0x7e) return false;  // an invalid sequence does nothing
    if (csi_has_intermediates_) return true;
    if (c == 'm') return false;  // colours and attributes
    if (csi_leader_ == '?' && (c == 'h' || c == 'l')) return !is_cosmetic_private_mode(csi_params_);
    return true;
}

}  // namespace caretz
