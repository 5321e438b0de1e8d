#include "sandbox/sudo_record.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace caretz {

namespace {

constexpr std::string_view kRecordStart = "sudo ";
constexpr std::string_view kCut = "...";

void append_field(std::string& out, std::string_view field) {
    std::string value(field.substr(0, kMaxSudoRecordField));
    if (field.size() > kMaxSudoRecordField)
        value.replace(value.size() - kCut.size(), kCut.size(), kCut);
    out += std::to_string(value.size());
    out += ':';
    out += value;
}

// Reads "N:bytes" at `pos`; advances past it.
std::optional<std::string> read_field(std::string_view text, std::size_t& pos) {
    std::size_t length = 0;
    const char* begin = text.data() + pos;
    const char* end = text.data() + text.size();
    auto [digits_end, error] = std::from_chars(begin, end, length);
    if (error != std::errc() || digits_end == begin || digits_end == end || *digits_end != ':' ||
        length > kMaxSudoRecordField)
        return std::nullopt;
    const std::size_t start = static_cast<std::size_t>(digits_end - text.data()) + 1;
    if (start + length > text.size()) return std::nullopt;
    pos = start + length;
    return std::string(text.substr(start, length));
}

// One record at `pos`, which is at "sudo "; advances past its newline.
std::optional<SudoRecord> read_record(std::string_view text, std::size_t& pos) {
    pos += kRecordStart.size();
    SudoRecord record;
    auto cwd = read_field(text, pos);
    if (!cwd) return std::nullopt;
    record.cwd = std::move(*cwd);
    while (pos < text.size() && text[pos] == ',') {
        ++pos;
        auto arg = read_field(text, pos);
        if (!arg || record.argv.size() == kMaxSudoRecordArgs) return std::nullopt;
        record.argv.push_back(std::move(*arg));
    }
    if (pos >= text.size() || text[pos] != '\n' || record.argv.empty()) return std::nullopt;
    ++pos;
    return record;
}

bool needs_quotes(std::string_view word) {
    if (word.empty()) return true;
    for (const char c : word) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') ||
                           std::string_view("-_./=:,+@%^").find(c) != std::string_view::npos;
        if (!plain) return true;
    }
    return false;
}

}  // namespace

std::string encode_sudo_record(const SudoRecord& record) {
    std::string out(kRecordStart);
    append_field(out, record.cwd);
    const std::size_t args = std::min(record.argv.size(), kMaxSudoRecordArgs);
    for (std::size_t i = 0; i < args; ++i) {
        out += ',';
        append_field(out, record.argv[i]);
    }
    out += '\n';
    return out;
}

std::vector<SudoRecord> parse_sudo_records(std::string_view text) {
    text = text.substr(0, kMaxSudoRecordsBytes);
    std::vector<SudoRecord> records;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t at = pos;
        if (text.substr(pos).starts_with(kRecordStart)) {
            if (auto record = read_record(text, pos)) {
                records.push_back(std::move(*record));
                continue;
            }
        }
        // Skip what does not parse up to the next line; a field's newline can only make a
        // fake start there, and a fake that parses is no more than a run of sudo could write.
        const std::size_t newline = text.find('\n', at);
        if (newline == std::string_view::npos) break;
        pos = newline + 1;
    }
    return records;
}

std::string sudo_command_line(const SudoRecord& record) {
    std::string line;
    for (std::size_t i = 0; i < record.argv.size(); ++i) {
        if (i) line += ' ';
        // argv[0] is whatever the caller named sudo by ("sudo", "/usr/bin/sudo").
        const std::string& word = record.argv[i];
        if (!needs_quotes(word)) {
            line += word;
            continue;
        }
        line += '\'';
        for (const char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += '\'';
    }
    return line;
}

}  // namespace caretz
