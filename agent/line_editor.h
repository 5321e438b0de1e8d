#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pty/terminal.h"

namespace caretz {

// Lines entered before, oldest first, bounded in size.
class History {
public:
    static constexpr size_t kDefaultMaxEntries = 1000;

    explicit History(size_t max_entries = kDefaultMaxEntries) : max_entries_(max_entries) {}

    // Records a line. Empty lines, a repeat of the newest entry and, as with bash's
    // ignorespace, a line that starts with a space (the way to keep one out) are not
    // recorded; when the history is full the oldest entry goes.
    void add(std::string line);

    size_t size() const { return entries_.size(); }
    // Entry `index`, 0 being the oldest.
    const std::string& operator[](size_t index) const { return entries_[index]; }

    // Adds the entries stored in the file at `path` (one per line, oldest first). History is a
    // convenience, never a reason to fail: a missing or unreadable file adds nothing.
    void load(const std::string& path);
    // Replaces the file at `path` with all entries, readable by the owner only because lines
    // may hold secrets. Errors are ignored, as for load.
    void save(const std::string& path) const;
    // add(), and the same line into the file at `path` at once, so that a hang-up loses
    // nothing. The file is read again first: sessions side by side each add their lines
    // rather than overwrite the others'.
    void add_and_save(const std::string& line, const std::string& path);

private:
    static bool worth_keeping(std::string_view line);

    size_t max_entries_;
    std::deque<std::string> entries_;
};

// What the line editor should do after a key.
enum class Action { none, submit, interrupt, eof, redraw };

// The line being edited: its text (always valid UTF-8) and a cursor that moves by whole
// characters. Pure: it interprets keys and touches no terminal.
// The longest line a LineBuffer holds, in bytes: the longest one argument may be
// (MAX_ARG_STRLEN, 128 KiB with its NUL), so that an approved line can still run outside as
// `$SHELL -c LINE`. Text that would go past it (a huge paste, a line yanked into itself again
// and again) is not taken, and no key's redraw has to measure a line of megabytes.
inline constexpr size_t kMaxLineBytes = 128 * 1024 - 1;

class LineBuffer {
public:
    LineBuffer() = default;
    // Up and Down walk `history`, which must outlive this buffer.
    explicit LineBuffer(const History& history);

    // Interprets one key as split by KeyDecoder (or a run of plain text, such as a paste).
    // Unknown escape sequences and unbound control keys are ignored, never inserted.
    Action feed(std::string_view key);

    const std::string& text() const { return text_; }
    // Byte offset into text(), always at the start of a character (or at the end).
    size_t cursor() const { return cursor_; }

private:
    enum class Edit;

    static std::optional<Edit> edit_for_key(std::string_view key);
    Action apply(Edit edit);
    Action feed_pasted(std::string_view key);
    void insert(std::string_view text);
    void erase(size_t from, size_t to);
    void kill(size_t from, size_t to);
    void delete_forward();
    void show_history_entry(size_t index);
    size_t history_size() const;

    const History* history_ = nullptr;
    std::string text_;
    size_t cursor_ = 0;
    std::string killed_;  // the text ^K, ^U or ^W removed last, for ^Y
    bool pasting_ = false;
    // The entry shown, history_size() being the new line; lines edited while walking the
    // history keep their edits until the line is submitted.
    size_t history_index_ = 0;
    std::map<size_t, std::string> edited_lines_;
};

// Splits raw terminal input, arriving in arbitrary chunks, into keys: escape sequences, UTF-8
// characters and single control bytes. Bytes that may still grow into a longer key wait.
class KeyDecoder {
public:
    // Appends `bytes` and returns the keys now complete.
    std::vector<std::string> feed(std::string_view bytes);
    // Gives up waiting: returns the incomplete key (a lone ESC, a cut-off sequence) as is.
    // The caller calls it after a short silence, which is how a lone Esc key is told apart
    // from the start of a sequence.
    std::vector<std::string> flush();
    bool has_pending() const { return !pending_.empty(); }

private:
    std::string pending_;
};

// The bytes that redraw the prompt line: carriage return, prompt and text, erase to the end of
// the line, and the cursor put back in place. A line wider than `columns` shows a window
// around the cursor instead of wrapping. Control characters show as ^X and C1 controls as
// M-^X, so text can never send the terminal a control sequence. The prompt is plain text.
std::string render(std::string_view prompt, const LineBuffer& buffer, int columns);
// The bytes that leave a finished line on the screen whole: the line cleared, then prompt and
// text, escaped as by render() but wrapping at the terminal's edge, so what scrolls away is
// everything that was entered rather than the window the cursor last saw.
std::string render_whole(std::string_view prompt, std::string_view text);

// How a read_line call ended.
struct LineResult {
    enum Kind { line, interrupted, eof };
    Kind kind;
    // The line entered; for `interrupted`, the line that ^C discarded; empty for `eof`.
    std::string text;
};

// Reads lines from a terminal that the caller has already put in raw mode; it never changes
// terminal modes itself.
class LineEditor {
public:
    // `columns` reports the terminal width, asked at each redraw so resizes take effect.
    LineEditor(Terminal& terminal, std::function<int()> columns);

    // Shows `prompt` and edits a line until Enter (line), ^C (interrupted, after echoing ^C)
    // or ^D on an empty line or closed input (eof). Keys typed ahead of the next prompt are
    // kept for the next call. A change of the window size redraws the line.
    LineResult read_line(std::string_view prompt);

    void add_history(std::string line) { history_.add(std::move(line)); }
    History& history() { return history_; }

private:
    std::optional<LineResult> apply_queued_keys(std::string_view prompt, LineBuffer& buffer);
    LineResult finish(Action action, std::string_view prompt, const LineBuffer& buffer);
    bool wait_for_keys();
    void draw(std::string_view prompt, const LineBuffer& buffer);

    Terminal& terminal_;
    std::function<int()> columns_;
    History history_;
    KeyDecoder decoder_;
    std::deque<std::string> queued_keys_;
};

}  // namespace caretz
