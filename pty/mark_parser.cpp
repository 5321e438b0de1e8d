#include "pty/mark_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace caretz {

namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';
constexpr std::string_view kOscStart = "\x1b]";
constexpr std::string_view kPromptStart = "133;A";
constexpr std::string_view kPromptEnd = "133;B";
constexpr std::string_view kCommandStart = "133;C";
constexpr std::string_view kUnreadLines = "133;U;";
constexpr std::string_view kCommandDone = "133;D;";
constexpr std::string_view kCwd = "7;file://";
constexpr std::string_view kNonceTag = ";caretz=";
constexpr size_t kMaxNumberDigits = 9;

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> percent_decode(std::string_view encoded) {
    std::string out;
    out.reserve(encoded.size());
    for (size_t i = 0; i < encoded.size(); ++i) {
        if (encoded[i] != '%') {
            out.push_back(encoded[i]);
            continue;
        }
        if (i + 2 >= encoded.size()) return std::nullopt;
        int high = hex_value(encoded[i + 1]);
        int low = hex_value(encoded[i + 2]);
        if (high < 0 || low < 0 || (high == 0 && low == 0)) return std::nullopt;
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
    }
    return out;
}

// A decimal number of at most kMaxNumberDigits digits: an exit status, a count of lines.
std::optional<int> parse_number(std::string_view digits) {
    if (digits.empty() || digits.size() > kMaxNumberDigits) return std::nullopt;
    if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    int status = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), status);
    return status;
}

// "HOST/PATH" -> the decoded "/PATH".
std::optional<std::string> parse_cwd(std::string_view host_and_path) {
    size_t slash = host_and_path.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    return percent_decode(host_and_path.substr(slash));
}

struct Mark {
    enum class Kind { prompt_start, prompt_end, command_start, unread_lines, command_done, cwd };
    Kind kind;
    int number = 0;  // the exit status, or the count of unread lines
    std::string path;
};

// Only OSC 133 and OSC 7 can be marks; any other OSC is passed on as soon as that shows.
bool could_start_mark(std::string_view content) {
    for (std::string_view prefix : {std::string_view("133;"), std::string_view("7;")}) {
        size_t n = std::min(prefix.size(), content.size());
        if (content.substr(0, n) == prefix.substr(0, n)) return true;
    }
    return false;
}

// `content` lies between "ESC ]" and the terminator.
std::optional<Mark> parse_mark(std::string_view content, std::string_view nonce_tag) {
    if (content.size() < nonce_tag.size() ||
        content.substr(content.size() - nonce_tag.size()) != nonce_tag) {
        return std::nullopt;
    }
    std::string_view body = content.substr(0, content.size() - nonce_tag.size());
    if (body == kPromptStart) return Mark{Mark::Kind::prompt_start, 0, {}};
    if (body == kPromptEnd) return Mark{Mark::Kind::prompt_end, 0, {}};
    if (body == kCommandStart) return Mark{Mark::Kind::command_start, 0, {}};
    for (auto [prefix, kind] : {std::pair{kUnreadLines, Mark::Kind::unread_lines},
                                std::pair{kCommandDone, Mark::Kind::command_done}}) {
        if (body.substr(0, prefix.size()) != prefix) continue;
        std::optional<int> number = parse_number(body.substr(prefix.size()));
        if (!number) return std::nullopt;
        return Mark{kind, *number, {}};
    }
    if (body.substr(0, kCwd.size()) == kCwd) {
        std::optional<std::string> path = parse_cwd(body.substr(kCwd.size()));
        if (!path) return std::nullopt;
        return Mark{Mark::Kind::cwd, 0, std::move(*path)};
    }
    return std::nullopt;
}

}  // namespace

MarkParser::MarkParser(std::string nonce) {
    if (nonce.empty()) throw std::invalid_argument("MarkParser needs a non-empty nonce");
    nonce_tag_ = std::string(kNonceTag) + nonce;
}

void MarkParser::feed(std::string_view bytes, Handler& handler) {
    size_t pos = 0;
    while (pos < bytes.size()) {
        if (!pending_.empty()) {
            if (take(static_cast<unsigned char>(bytes[pos]), handler)) ++pos;
            continue;
        }
        const void* esc = std::memchr(bytes.data() + pos, kEsc, bytes.size() - pos);
        size_t end =
            esc ? static_cast<size_t>(static_cast<const char*>(esc) - bytes.data()) : bytes.size();
        if (end > pos) handler.on_output(bytes.substr(pos, end - pos));
        if (!esc) return;
        pending_.push_back(kEsc);
        pos = end + 1;
    }
}

void MarkParser::flush(Handler& handler) {
    if (pending_.empty()) return;
    std::string held;
    held.swap(pending_);
    handler.on_output(held);
}

// Adds one byte to the pending sequence and returns true, or decides the sequence is not a mark,
// passes it on and returns false without consuming `c`, which then starts afresh (it may be
// the ESC of a real mark).
bool MarkParser::take(unsigned char c, Handler& handler) {
    if (pending_.size() == 1) {
        if (c != ']') {
            flush(handler);
            return false;
        }
        pending_.push_back(']');
        return true;
    }
    if (pending_.back() == kEsc) {
        if (c == '\\') {
            pending_.pop_back();
            finish('\\', handler);
            return true;
        }
        // An ESC that is not ST leaves the sequence unterminated and may begin a new one.
        pending_.pop_back();
        flush(handler);
        pending_.push_back(kEsc);
        return false;
    }
    if (c == static_cast<unsigned char>(kBel)) {
        finish(kBel, handler);
        return true;
    }
    if (c == static_cast<unsigned char>(kEsc)) {
        pending_.push_back(kEsc);
        return true;
    }
    if (c < 0x20 || pending_.size() >= kMaxMarkSize) {
        flush(handler);
        return false;
    }
    pending_.push_back(static_cast<char>(c));
    if (!could_start_mark(std::string_view(pending_).substr(kOscStart.size()))) flush(handler);
    return true;
}

// pending_ holds "ESC ] content"; the terminator (BEL, or the '\' of ST after an ESC) has
// just been read.
void MarkParser::finish(char terminator, Handler& handler) {
    std::optional<Mark> mark =
        parse_mark(std::string_view(pending_).substr(kOscStart.size()), nonce_tag_);
    if (!mark) {
        if (terminator == '\\') pending_.push_back(kEsc);
        pending_.push_back(terminator);
        flush(handler);
        return;
    }
    pending_.clear();
    switch (mark->kind) {
        case Mark::Kind::prompt_start:
            handler.on_prompt_start();
            break;
        case Mark::Kind::prompt_end:
            handler.on_prompt_end();
            break;
        case Mark::Kind::command_start:
            handler.on_command_start();
            break;
        case Mark::Kind::unread_lines:
            handler.on_unread_lines(mark->number);
            break;
        case Mark::Kind::command_done:
            handler.on_command_done(mark->number);
            break;
        case Mark::Kind::cwd:
            handler.on_cwd(std::move(mark->path));
            break;
    }
}

std::string command_start_mark(std::string_view nonce) {
    return std::string(kOscStart) + std::string(kCommandStart) + std::string(kNonceTag) +
           std::string(nonce) + kBel;
}

}  // namespace caretz
