#include "agent/line_editor.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "pty/fd_io.h"
#include "pty/utf8.h"

namespace caretz {
namespace {

constexpr char kEsc = '\x1b';
constexpr std::string_view kPasteStart = "\x1b[200~";
constexpr std::string_view kPasteEnd = "\x1b[201~";
// Long enough for any key a terminal sends; stops garbage from growing the pending bytes.
constexpr size_t kLongestEscapeSequence = 32;
// A lone ESC is a key of its own once this much silence follows it.
constexpr int kLoneEscapeTimeoutMs = 50;

size_t next_character(std::string_view text, size_t pos) {
    if (pos >= text.size()) return text.size();
    ++pos;
    while (pos < text.size() && is_utf8_continuation(text[pos])) ++pos;
    return pos;
}

size_t previous_character(std::string_view text, size_t pos) {
    if (pos == 0) return 0;
    --pos;
    while (pos > 0 && is_utf8_continuation(text[pos])) --pos;
    return pos;
}

// Words are separated by whitespace, as for a shell's ^W; all of it is ASCII, so scanning
// bytes always stops on a character boundary.
bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n';
}

size_t previous_word_start(std::string_view text, size_t pos) {
    while (pos > 0 && is_space(text[pos - 1])) --pos;
    while (pos > 0 && !is_space(text[pos - 1])) --pos;
    return pos;
}

size_t next_word_end(std::string_view text, size_t pos) {
    while (pos < text.size() && is_space(text[pos])) ++pos;
    while (pos < text.size() && !is_space(text[pos])) ++pos;
    return pos;
}

}  // namespace

// ---- History ----

namespace {

// One entry per line in the history file, so line breaks and backslashes are escaped.
std::string escape_entry(std::string_view entry) {
    std::string escaped;
    for (char c : entry) {
        if (c == '\\') {
            escaped += "\\\\";
        } else if (c == '\n') {
            escaped += "\\n";
        } else if (c == '\r') {
            escaped += "\\r";
        } else {
            escaped += c;
        }
    }
    return escaped;
}

std::string unescape_entry(std::string_view line) {
    std::string entry;
    for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] != '\\' || i + 1 == line.size()) {
            entry += line[i];
            continue;
        }
        char next = line[++i];
        if (next == 'n') {
            entry += '\n';
        } else if (next == 'r') {
            entry += '\r';
        } else {
            entry += next;
        }
    }
    return entry;
}

}  // namespace

bool History::worth_keeping(std::string_view line) {
    return !line.empty() && line[0] != ' ';
}

void History::add(std::string line) {
    if (!worth_keeping(line) || (!entries_.empty() && entries_.back() == line)) return;
    entries_.push_back(std::move(line));
    while (entries_.size() > max_entries_) entries_.pop_front();
}

void History::load(const std::string& path) {
    std::ifstream file(path);
    std::string line;
    while (std::getline(file, line)) add(unescape_entry(line));
}

void History::save(const std::string& path) const {
    // A crash never leaves half a history (the file is replaced whole). It is saved after every
    // line, so no fsync: waiting for the disk at each Enter would show as a lagging prompt on a
    // busy machine, and a history is a convenience that a power cut may cost a line of.
    std::string contents;
    for (const std::string& entry : entries_) contents += escape_entry(entry) + "\n";
    replace_file(path, contents, /*durable=*/false);
}

void History::add_and_save(const std::string& line, const std::string& path) {
    if (!worth_keeping(line)) return;
    add(line);
    History file(max_entries_);
    file.load(path);
    file.add(line);
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    file.save(path);
}

// ---- LineBuffer ----

namespace {

// Text starts with a printable character. Tab counts as text too: pasted code is indented with
// it when the terminal does not bracket pastes.
bool is_text_key(std::string_view key) {
    unsigned char first = key[0];
    return (first >= 0x20 && first != 0x7F) || key == "\t";
}

}  // namespace

enum class LineBuffer::Edit {
    submit,
    interrupt,
    delete_or_eof,
    redraw,
    backspace,
    delete_forward,
    left,
    right,
    word_left,
    word_right,
    home,
    end,
    kill_to_end,
    kill_to_start,
    kill_word,
    yank,
    history_previous,
    history_next,
    paste_start,
};

std::optional<LineBuffer::Edit> LineBuffer::edit_for_key(std::string_view key) {
    // Emacs-style control keys plus what xterm, rxvt, the Linux console and tmux send for the
    // cursor keys, in both normal and application cursor mode.
    static constexpr std::pair<std::string_view, Edit> kBindings[] = {
        {"\r", Edit::submit},
        {"\n", Edit::submit},
        {"\x03", Edit::interrupt},
        {"\x04", Edit::delete_or_eof},
        {"\x0c", Edit::redraw},
        {"\x7f", Edit::backspace},
        {"\x08", Edit::backspace},
        {"\x1b[3~", Edit::delete_forward},
        {"\x1b[D", Edit::left},
        {"\x1bOD", Edit::left},
        {"\x02", Edit::left},
        {"\x1b[C", Edit::right},
        {"\x1bOC", Edit::right},
        {"\x06", Edit::right},
        {"\033b", Edit::word_left},  // Alt-b; octal, as "\x1bb" would be one hex escape

        {"\x1b[1;5D", Edit::word_left},
        {"\x1b[1;3D", Edit::word_left},
        {"\033f", Edit::word_right},
        {"\x1b[1;5C", Edit::word_right},
        {"\x1b[1;3C", Edit::word_right},
        {"\x1b[H", Edit::home},
        {"\x1bOH", Edit::home},
        {"\x1b[1~", Edit::home},
        {"\x1b[7~", Edit::home},
        {"\x01", Edit::home},
        {"\x1b[F", Edit::end},
        {"\x1bOF", Edit::end},
        {"\x1b[4~", Edit::end},
        {"\x1b[8~", Edit::end},
        {"\x05", Edit::end},
        {"\x0b", Edit::kill_to_end},
        {"\x15", Edit::kill_to_start},
        {"\x17", Edit::kill_word},
        {"\x1b\x7f", Edit::kill_word},
        {"\x19", Edit::yank},
        {"\x1b[A", Edit::history_previous},
        {"\x1bOA", Edit::history_previous},
        {"\x10", Edit::history_previous},
        {"\x1b[B", Edit::history_next},
        {"\x1bOB", Edit::history_next},
        {"\x0e", Edit::history_next},
        {kPasteStart, Edit::paste_start},
    };
    for (const auto& [bound_key, edit] : kBindings) {
        if (bound_key == key) return edit;
    }
    return std::nullopt;
}

LineBuffer::LineBuffer(const History& history)
    : history_(&history), history_index_(history.size()) {}

Action LineBuffer::feed(std::string_view key) {
    if (key.empty()) return Action::none;
    if (pasting_) return feed_pasted(key);
    if (auto edit = edit_for_key(key)) return apply(*edit);
    if (is_text_key(key)) insert(key);
    return Action::none;
}

// Inside a bracketed paste every key is text: line breaks become part of the line instead of
// submitting it, and control characters are kept (render shows them escaped).
Action LineBuffer::feed_pasted(std::string_view key) {
    if (key == kPasteEnd) {
        pasting_ = false;
    } else if (key == "\r" || key == "\n") {
        insert("\n");
    } else if (key[0] != kEsc) {
        insert(key);
    }
    return Action::none;
}

Action LineBuffer::apply(Edit edit) {
    switch (edit) {
        case Edit::submit:
            return Action::submit;
        case Edit::interrupt:
            return Action::interrupt;
        case Edit::redraw:
            return Action::redraw;
        case Edit::delete_or_eof:
            if (text_.empty()) return Action::eof;
            delete_forward();
            break;
        case Edit::backspace:
            erase(previous_character(text_, cursor_), cursor_);
            break;
        case Edit::delete_forward:
            delete_forward();
            break;
        case Edit::left:
            cursor_ = previous_character(text_, cursor_);
            break;
        case Edit::right:
            cursor_ = next_character(text_, cursor_);
            break;
        case Edit::word_left:
            cursor_ = previous_word_start(text_, cursor_);
            break;
        case Edit::word_right:
            cursor_ = next_word_end(text_, cursor_);
            break;
        case Edit::home:
            cursor_ = 0;
            break;
        case Edit::end:
            cursor_ = text_.size();
            break;
        case Edit::kill_to_end:
            kill(cursor_, text_.size());
            break;
        case Edit::kill_to_start:
            kill(0, cursor_);
            break;
        case Edit::kill_word:
            kill(previous_word_start(text_, cursor_), cursor_);
            break;
        case Edit::yank:
            insert(killed_);
            break;
        case Edit::history_previous:
            if (history_index_ > 0) show_history_entry(history_index_ - 1);
            break;
        case Edit::history_next:
            if (history_index_ < history_size()) show_history_entry(history_index_ + 1);
            break;
        case Edit::paste_start:
            pasting_ = true;
            break;
    }
    return Action::none;
}

void LineBuffer::insert(std::string_view text) {
    std::string valid = valid_utf8(text);
    const size_t room = kMaxLineBytes - std::min(kMaxLineBytes, text_.size());
    if (valid.size() > room) {
        size_t cut = room;  // on a character's first byte
        while (cut > 0 && (static_cast<unsigned char>(valid[cut]) & 0xC0) == 0x80) --cut;
        valid.resize(cut);
    }
    text_.insert(cursor_, valid);
    cursor_ += valid.size();
}

// Every erase touches the cursor at one end, so the cursor ends up at `from`.
void LineBuffer::erase(size_t from, size_t to) {
    text_.erase(from, to - from);
    cursor_ = from;
}

void LineBuffer::kill(size_t from, size_t to) {
    if (from == to) return;
    killed_ = text_.substr(from, to - from);
    erase(from, to);
}

void LineBuffer::delete_forward() {
    erase(cursor_, next_character(text_, cursor_));
}

void LineBuffer::show_history_entry(size_t index) {
    edited_lines_[history_index_] = text_;
    history_index_ = index;
    auto edited = edited_lines_.find(index);
    if (edited != edited_lines_.end()) {
        text_ = edited->second;
    } else {
        text_ = (*history_)[index];
    }
    cursor_ = text_.size();
}

size_t LineBuffer::history_size() const {
    return history_ ? history_->size() : 0;
}

// ---- KeyDecoder ----

namespace {

// Control Sequence Introducer: ESC [, parameter and intermediate bytes, one final byte.
size_t csi_length(std::string_view bytes) {
    for (size_t i = 2; i < bytes.size(); ++i) {
        unsigned char byte = bytes[i];
        if (byte >= 0x40 && byte <= 0x7E) return i + 1;
        // Malformed or overlong: what came so far is one (unknown) key.
        if (byte < 0x20 || byte > 0x3F || i >= kLongestEscapeSequence) return i;
    }
    return 0;
}

size_t escape_key_length(std::string_view bytes) {
    if (bytes.size() < 2) return 0;
    unsigned char second = bytes[1];
    if (second == '[') return csi_length(bytes);
    if (second == 'O') return bytes.size() < 3 ? 0 : 3;
    // ESC before another ESC or a non-ASCII byte was a lone Esc key; before ASCII it is Alt.
    if (second == kEsc || second >= 0x80) return 1;
    return 2;
}

size_t character_key_length(std::string_view bytes) {
    size_t length = utf8_sequence_length(bytes[0]);
    if (length == 0) return 1;
    for (size_t i = 1; i < length; ++i) {
        if (i == bytes.size()) return 0;
        if (!is_utf8_continuation(bytes[i])) return i;
    }
    return length;
}

// The length of the key at the start of `bytes`, or 0 when more bytes could still extend it.
size_t key_length(std::string_view bytes) {
    return bytes[0] == kEsc ? escape_key_length(bytes) : character_key_length(bytes);
}

}  // namespace

std::vector<std::string> KeyDecoder::feed(std::string_view bytes) {
    pending_.append(bytes);
    std::vector<std::string> keys;
    std::string_view rest = pending_;
    while (!rest.empty()) {
        size_t length = key_length(rest);
        if (length == 0) break;
        keys.emplace_back(rest.substr(0, length));
        rest.remove_prefix(length);
    }
    pending_.erase(0, pending_.size() - rest.size());
    return keys;
}

std::vector<std::string> KeyDecoder::flush() {
    if (pending_.empty()) return {};
    std::vector<std::string> keys{std::move(pending_)};
    pending_.clear();
    return keys;
}

// ---- render ----

namespace {

// A character as drawn: its bytes in the line, and the columns it takes. What is written for
// it (shown()) is made only for the characters on the screen: a line of any length costs each
// key no allocation per character.
struct Glyph {
    std::string_view bytes;
    char32_t code_point;
    int width;
};

std::string caret_notation(char32_t control) {
    return {'^', control == 0x7F ? '?' : static_cast<char>(control + 0x40)};
}

// What the screen would not show for what it is appears escaped, as in the offer, so the line
// submitted is the line seen.
void append_shown(std::string& out, const Glyph& glyph) {
    const char32_t code_point = glyph.code_point;
    if (code_point < 0x20 || code_point == 0x7F) {
        out += caret_notation(code_point);
    } else if (code_point >= 0x80 && code_point < 0xA0) {
        out += "M-" + caret_notation(code_point - 0x80);
    } else if (needs_visible_escape(code_point)) {
        out += code_point_escape(code_point);
    } else {
        out += glyph.bytes;
    }
}

int shown_width(char32_t code_point) {
    if (code_point < 0x20 || code_point == 0x7F) return 2;
    if (code_point >= 0x80 && code_point < 0xA0) return 4;
    if (needs_visible_escape(code_point))
        return static_cast<int>(code_point_escape(code_point).size());
    return display_width(code_point);
}

void append_glyphs(std::string_view text, std::vector<Glyph>& glyphs) {
    for (size_t pos = 0; pos < text.size();) {
        const Utf8Char character = decode_utf8(text, pos);
        glyphs.push_back({text.substr(pos, character.length), character.code_point,
                          shown_width(character.code_point)});
        pos += character.length;
    }
}

int total_width(const std::vector<Glyph>& glyphs, size_t count) {
    int width = 0;
    for (size_t i = 0; i < count; ++i) width += glyphs[i].width;
    return width;
}

// The first column shown when `line_width` columns must fit in `visible`. The window moves by
// half a screen at a time, so it does not shift on every keystroke, and always holds the whole
// character under the cursor.
int first_visible_column(int cursor_column, int cursor_width, int line_width, int visible) {
    if (line_width <= visible) return 0;
    int last_cursor_column = cursor_column + cursor_width - 1;
    if (last_cursor_column < visible) return 0;
    int step = std::max(1, visible / 2);
    int first = ((last_cursor_column - visible) / step + 1) * step;
    return std::min(first, cursor_column);
}

// The glyphs within [first, first + visible); one cut by the left edge is replaced by spaces,
// one cut by the right edge is left out.
std::string visible_part(const std::vector<Glyph>& glyphs, int first, int visible) {
    std::string shown;
    int column = 0;
    for (const Glyph& glyph : glyphs) {
        int start = column;
        column += glyph.width;
        if (column > first + visible) break;
        if (start >= first) {
            append_shown(shown, glyph);
        } else if (column > first) {
            shown.append(static_cast<size_t>(column - first), ' ');
        }
    }
    return shown;
}

}  // namespace

std::string render(std::string_view prompt, const LineBuffer& buffer, int columns) {
    std::string_view text = buffer.text();
    std::vector<Glyph> glyphs;
    append_glyphs(prompt, glyphs);
    append_glyphs(text.substr(0, buffer.cursor()), glyphs);
    size_t cursor_glyph = glyphs.size();
    append_glyphs(text.substr(buffer.cursor()), glyphs);

    int cursor_column = total_width(glyphs, cursor_glyph);
    int cursor_width = cursor_glyph < glyphs.size() ? glyphs[cursor_glyph].width : 1;
    // The last column stays empty: writing into it would leave the terminal about to wrap.
    int visible = std::max(1, columns - 1);
    int first = first_visible_column(cursor_column, std::max(1, cursor_width),
                                     total_width(glyphs, glyphs.size()), visible);

    std::string out = "\r" + visible_part(glyphs, first, visible) + "\x1b[K\r";
    if (cursor_column > first) out += "\x1b[" + std::to_string(cursor_column - first) + "C";
    return out;
}

std::string render_whole(std::string_view prompt, std::string_view text) {
    std::vector<Glyph> glyphs;
    append_glyphs(prompt, glyphs);
    append_glyphs(text, glyphs);
    // Erased first: erasing after a line that fills the last column would take its last
    // character, where the cursor waits to wrap.
    std::string out = "\r\x1b[K";
    for (const Glyph& glyph : glyphs) append_shown(out, glyph);
    return out;
}

// ---- LineEditor ----

namespace {

// When the terminal size is unknown (not a terminal, or the query failed).
constexpr int kFallbackColumns = 80;

}  // namespace

LineEditor::LineEditor(Terminal& terminal, std::function<int()> columns)
    : terminal_(terminal), columns_(std::move(columns)) {}

LineResult LineEditor::read_line(std::string_view prompt) {
    LineBuffer buffer(history_);
    for (;;) {
        if (auto result = apply_queued_keys(prompt, buffer)) return *std::move(result);
        draw(prompt, buffer);
        if (!wait_for_keys()) return finish(Action::eof, prompt, buffer);
    }
}

std::optional<LineResult> LineEditor::apply_queued_keys(std::string_view prompt,
                                                        LineBuffer& buffer) {
    while (!queued_keys_.empty()) {
        std::string key = std::move(queued_keys_.front());
        queued_keys_.pop_front();
        Action action = buffer.feed(key);
        if (action == Action::redraw) {
            terminal_.write("\x1b[H\x1b[2J");
        } else if (action != Action::none) {
            return finish(action, prompt, buffer);
        }
    }
    return std::nullopt;
}

LineResult LineEditor::finish(Action action, std::string_view prompt, const LineBuffer& buffer) {
    switch (action) {
        case Action::submit:
            terminal_.write(render_whole(prompt, buffer.text()) + "\r\n");
            return {LineResult::line, buffer.text()};
        case Action::interrupt:
            terminal_.write(render_whole(prompt, buffer.text()) + "^C\r\n");
            return {LineResult::interrupted, buffer.text()};
        default:
            draw(prompt, buffer);
            terminal_.write("\r\n");
            return {LineResult::eof, ""};
    }
}

// Waits for input and queues the keys it completes. False when the input is closed.
bool LineEditor::wait_for_keys() {
    const bool escape_pending = decoder_.has_pending();
    std::vector<std::string> keys;
    if (terminal_.wait_for_keys(escape_pending ? kLoneEscapeTimeoutMs : -1)) {
        keys = decoder_.feed(terminal_.take_keys());
    } else if (terminal_.input_closed()) {
        return false;
    } else if (escape_pending) {
        keys = decoder_.flush();
    }
    for (std::string& key : keys) queued_keys_.push_back(std::move(key));
    return true;
}

void LineEditor::draw(std::string_view prompt, const LineBuffer& buffer) {
    int columns = columns_ ? columns_() : 0;
    terminal_.write(render(prompt, buffer, columns > 0 ? columns : kFallbackColumns));
}

}  // namespace caretz
