#include "sandbox/program_run.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace caretz {

namespace {

constexpr std::string_view kRecordStart = "run ";
constexpr std::string_view kCut = "...";

void append_field(std::string& out, std::string_view field) {
    std::string value(field.substr(0, kMaxRunRecordField));
    if (field.size() > kMaxRunRecordField)
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
        length > kMaxRunRecordField)
        return std::nullopt;
    const std::size_t start = static_cast<std::size_t>(digits_end - text.data()) + 1;
    if (start + length > text.size()) return std::nullopt;
    pos = start + length;
    return std::string(text.substr(start, length));
}

// One record at `pos`, which is at "run "; advances past its newline.
std::optional<ProgramRun> read_record(std::string_view text, std::size_t& pos) {
    pos += kRecordStart.size();
    ProgramRun record;
    auto program = read_field(text, pos);
    if (!program || program->empty() || pos >= text.size() || text[pos++] != ',')
        return std::nullopt;
    record.program = std::move(*program);
    auto cwd = read_field(text, pos);
    if (!cwd) return std::nullopt;
    record.cwd = std::move(*cwd);
    while (pos < text.size() && text[pos] == ',') {
        ++pos;
        auto arg = read_field(text, pos);
        if (!arg || record.argv.size() == kMaxRunRecordArgs) return std::nullopt;
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

std::string encode_program_run(const ProgramRun& record) {
    std::string out(kRecordStart);
    append_field(out, record.program);
    out += ',';
    append_field(out, record.cwd);
    const std::size_t args = std::min(record.argv.size(), kMaxRunRecordArgs);
    for (std::size_t i = 0; i < args; ++i) {
        out += ',';
        append_field(out, record.argv[i]);
    }
    out += '\n';
    return out;
}

std::vector<ProgramRun> parse_program_runs(std::string_view text) {
    text = text.substr(0, kMaxRunRecordsBytes);
    std::vector<ProgramRun> records;
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
        // fake start there, and a fake that parses is no more than a run of the program could
        // write.
        const std::size_t newline = text.find('\n', at);
        if (newline == std::string_view::npos) break;
        pos = newline + 1;
    }
    return records;
}

std::string run_command_line(const ProgramRun& record) {
    std::string line;
    for (std::size_t i = 0; i < record.argv.size(); ++i) {
        if (i) line += ' ';
        // argv[0] is whatever the caller named the program by ("sudo", "/usr/bin/sudo").
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
