#include "pty/vterm_screen.h"

#include <vterm.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <utility>
#include <vector>

#include "pty/escape_splitter.h"
#include "pty/utf8.h"

namespace caretz {

namespace {

// libvterm decodes each write into a stack array as large as the write, so big writes are cut.
constexpr size_t kMaxWriteSize = 4096;
constexpr int kNoGlyph = std::numeric_limits<int>::min() / 2;
constexpr uint32_t kWideCharRightHalf = static_cast<uint32_t>(-1);
constexpr size_t kMaxHeldBytes = 64;

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
        out.push_back(static_cast<char>(0xf0 | ((cp >> 18) & 0x07)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
}

// One row as UTF-8. Wide characters appear once. Cells never written at the end of the row are
// left out, so its only trailing blanks are spaces the program printed; they matter when the
// row wrapped into the next one.
std::string row_text(const VTermScreenCell* cells, int cols) {
    std::string out;
    size_t written_end = 0;
    for (int col = 0; col < cols; ++col) {
        const VTermScreenCell& cell = cells[col];
        if (cell.chars[0] == kWideCharRightHalf) continue;
        if (cell.chars[0] == 0) {
            out.push_back(' ');
            continue;
        }
        for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i] != 0; ++i) {
            append_utf8(out, cell.chars[i]);
        }
        written_end = out.size();
    }
    out.resize(written_end);
    return out;
}

void discard_terminal_replies(const char*, size_t, void*) {}

// Where the last character of `text` starts, complete or not.
size_t last_character_start(std::string_view text) {
    size_t start = text.size();
    while (start > 0 && text.size() - start < 3 && is_utf8_continuation(text[start - 1])) --start;
    return start > 0 ? start - 1 : 0;
}

// The code point of one whole UTF-8 character, or -1 if it is incomplete or invalid.
int64_t decode_character(std::string_view bytes) {
    const Utf8Char character = decode_utf8(bytes, 0);
    if (!character.valid || character.length != bytes.size()) return -1;
    return character.code_point;
}

// Code points that may attach to the character before them: combining marks, zero-width
// joiners, variation selectors and emoji modifiers. Generous on purpose (whole Indic blocks),
// since a false "may" only delays a character.
bool may_combine(int64_t cp) {
    static constexpr std::pair<int64_t, int64_t> kRanges[] = {
        {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05c7},   {0x0610, 0x061a},
        {0x064b, 0x065f}, {0x0670, 0x0670}, {0x06d6, 0x06ed},   {0x0900, 0x0dff},
        {0x0e31, 0x0e4e}, {0x0eb1, 0x0ecd}, {0x1ab0, 0x1aff},   {0x1dc0, 0x1dff},
        {0x200b, 0x200f}, {0x20d0, 0x20ff}, {0x302a, 0x302f},   {0x3099, 0x309a},
        {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f}, {0x1f3fb, 0x1f3ff}, {0xe0100, 0xe01ef},
    };
    for (const auto& [low, high] : kRanges) {
        if (cp >= low && cp <= high) return true;
    }
    return false;
}

// Where the text that must wait begins: at the last character that cannot attach to the one
// before it, so that it and the marks after it reach libvterm in one write.
size_t held_text_start(std::string_view text) {
    size_t start = text.size();
    while (start > 0 && text.size() - start < kMaxHeldBytes) {
        size_t end = start;
        start = last_character_start(text.substr(0, end));
        int64_t cp = decode_character(text.substr(start, end - start));
        if (cp >= 0 && !may_combine(cp)) break;
    }
    return start;
}

}  // namespace

struct VtermScreen::Impl {
    struct Row {
        std::string text;
        bool continues_previous;
    };

    Impl(int row_count, int col_count, size_t scrollback_limit);
    ~Impl() { vterm_free(vterm); }

    void feed(std::string_view bytes);
    void feed_text(std::string_view text);
    void write_held_text();
    std::string text();

    void on_damage(VTermRect rect);
    void on_moverect(VTermRect dest, VTermRect src);
    void on_alternate_screen(bool on);
    void on_pushline(const VTermScreenCell* cells);

    static int damage_callback(VTermRect rect, void* user);
    static int moverect_callback(VTermRect dest, VTermRect src, void* user);
    static int settermprop_callback(VTermProp prop, VTermValue* value, void* user);
    static int pushline_callback(int cols, const VTermScreenCell* cells, void* user);

    std::vector<char>& continues() { return continues_previous[alternate ? 1 : 0]; }
    const std::vector<char>& continues() const { return continues_previous[alternate ? 1 : 0]; }
    void write_to_vterm(std::string_view bytes);

    int rows;
    int cols;
    size_t max_scrollback_rows;
    VTerm* vterm;
    VTermScreen* screen;
    EscapeSplitter splitter;
    // Per screen buffer (normal, alternate): row r holds the continuation of row r-1.
    std::vector<char> continues_previous[2];
    bool alternate = false;
    bool feeding_text = false;
    bool row_may_have_changed = true;
    int last_glyph_row = kNoGlyph;
    int rows_pushed_this_scroll = 0;
    std::deque<Row> scrollback;
    // The end of the text so far, not yet given to libvterm (see feed_text).
    std::string held_text;
};

VtermScreen::Impl::Impl(int row_count, int col_count, size_t scrollback_limit)
    : rows(std::max(row_count, 1)),
      cols(std::max(col_count, 1)),
      max_scrollback_rows(scrollback_limit),
      vterm(vterm_new(rows, cols)),
      screen(vterm_obtain_screen(vterm)),
      continues_previous{std::vector<char>(rows, 0), std::vector<char>(rows, 0)} {
    vterm_set_utf8(vterm, 1);
    vterm_output_set_callback(vterm, discard_terminal_replies, nullptr);
    static const VTermScreenCallbacks callbacks = {
        .damage = damage_callback,
        .moverect = moverect_callback,
        .movecursor = nullptr,
        .settermprop = settermprop_callback,
        .bell = nullptr,
        .resize = nullptr,
        .sb_pushline = pushline_callback,
        .sb_popline = nullptr,
    };
    vterm_screen_set_callbacks(screen, &callbacks, this);
    vterm_screen_set_damage_merge(screen, VTERM_DAMAGE_CELL);
    vterm_screen_enable_altscreen(screen, 1);
    vterm_screen_reset(screen, 1);
}

int VtermScreen::Impl::damage_callback(VTermRect rect, void* user) {
    static_cast<Impl*>(user)->on_damage(rect);
    return 1;
}

// Returning 1 tells libvterm the move is handled, so it sends no damage for the moved rows.
int VtermScreen::Impl::moverect_callback(VTermRect dest, VTermRect src, void* user) {
    static_cast<Impl*>(user)->on_moverect(dest, src);
    return 1;
}

int VtermScreen::Impl::settermprop_callback(VTermProp prop, VTermValue* value, void* user) {
    if (prop == VTERM_PROP_ALTSCREEN) {
        static_cast<Impl*>(user)->on_alternate_screen(value->boolean != 0);
    }
    return 1;
}

int VtermScreen::Impl::pushline_callback(int, const VTermScreenCell* cells, void* user) {
    static_cast<Impl*>(user)->on_pushline(cells);
    return 1;
}

void VtermScreen::Impl::feed(std::string_view bytes) {
    for (const EscapeSplitter::Segment& segment : splitter.split(bytes)) {
        if (segment.text) {
            feed_text(segment.bytes);
            continue;
        }
        write_held_text();
        if (segment.may_change_row) row_may_have_changed = true;
        write_to_vterm(segment.bytes);
    }
}

// libvterm 0.1.4 garbles a character split across two writes: a UTF-8 sequence becomes two
// U+FFFD, and a combining mark is lost when its base character sits in the last column. So the
// last character of the text so far, with any marks and incomplete bytes after it, waits and
// goes out with the text after it.
void VtermScreen::Impl::feed_text(std::string_view text) {
    std::string joined;
    if (!held_text.empty()) {
        joined = held_text + std::string(text);
        text = joined;
    }
    size_t held_from = held_text_start(text);
    feeding_text = true;
    write_to_vterm(text.substr(0, held_from));
    feeding_text = false;
    held_text.assign(text.substr(held_from));
}

// Before a control, and before the text is read. A character still incomplete here is invalid
// and libvterm shows it as U+FFFD.
void VtermScreen::Impl::write_held_text() {
    feeding_text = true;
    write_to_vterm(held_text);
    feeding_text = false;
    held_text.clear();
}

void VtermScreen::Impl::write_to_vterm(std::string_view bytes) {
    while (!bytes.empty()) {
        size_t size = std::min(bytes.size(), kMaxWriteSize);
        while (size < bytes.size() && size > 1 && is_utf8_continuation(bytes[size])) --size;
        vterm_input_write(vterm, bytes.data(), size);
        bytes.remove_prefix(size);
    }
}

// During text, a damaged cell or cell pair is a character being put. Otherwise damage is an
// erase, which (as in later libvterm) ends any wrap across the erased line ends.
void VtermScreen::Impl::on_damage(VTermRect rect) {
    std::vector<char>& flags = continues();
    bool one_glyph = rect.end_row - rect.start_row == 1 && rect.end_col - rect.start_col <= 2;
    if (feeding_text && one_glyph) {
        if (!row_may_have_changed && rect.start_col == 0 && rect.start_row == last_glyph_row + 1) {
            flags[rect.start_row] = 1;
        }
        last_glyph_row = rect.start_row;
        row_may_have_changed = false;
        return;
    }
    if (rect.end_col == cols) {
        for (int row = rect.start_row + 1; row <= rect.end_row && row < rows; ++row) flags[row] = 0;
        if (rect.start_col == 0) {
            for (int row = rect.start_row; row < rect.end_row; ++row) flags[row] = 0;
        }
    }
}

// Whole rows moved (a scroll): the wrap marks move with them.
void VtermScreen::Impl::on_moverect(VTermRect dest, VTermRect src) {
    int pushed = rows_pushed_this_scroll;
    rows_pushed_this_scroll = 0;
    if (dest.start_col != 0 || dest.end_col != cols) return;
    std::vector<char>& flags = continues();
    int upward = src.start_row - dest.start_row;
    std::vector<char> moved = flags;
    for (int row = dest.start_row; row < dest.end_row; ++row) moved[row] = flags[row + upward];
    int area_start = std::min(dest.start_row, src.start_row);
    int area_end = std::max(dest.end_row, src.end_row);
    for (int row = area_start; row < area_end; ++row) {
        if (row < dest.start_row || row >= dest.end_row) moved[row] = 0;
    }
    // The first moved row's predecessor is gone, unless it went to the scrollback.
    if (pushed == 0) moved[dest.start_row] = 0;
    flags = std::move(moved);
    if (last_glyph_row >= area_start && last_glyph_row < area_end) last_glyph_row -= upward;
}

void VtermScreen::Impl::on_alternate_screen(bool on) {
    alternate = on;
    if (on) std::fill(continues().begin(), continues().end(), 0);
    last_glyph_row = kNoGlyph;
    row_may_have_changed = true;
}

// libvterm pushes rows 0, 1, ... of a scroll before it reports the move, so the n-th push of
// a scroll is row n.
void VtermScreen::Impl::on_pushline(const VTermScreenCell* cells) {
    int row = rows_pushed_this_scroll++;
    bool wrapped_from_above = row < rows && continues()[row] != 0;
    if (max_scrollback_rows == 0) return;
    scrollback.push_back(Row{row_text(cells, cols), wrapped_from_above});
    if (scrollback.size() > max_scrollback_rows) scrollback.pop_front();
}

std::string VtermScreen::Impl::text() {
    // Whatever waits for a possible combining mark is shown now, as it stands.
    write_held_text();
    std::vector<std::string> lines;
    auto add_row = [&lines](std::string row, bool wrapped_from_above) {
        if (wrapped_from_above && !lines.empty()) {
            lines.back() += row;
        } else {
            lines.push_back(std::move(row));
        }
    };
    for (const Row& row : scrollback) add_row(row.text, row.continues_previous);
    std::vector<VTermScreenCell> cells(cols);
    for (int row = 0; row < rows; ++row) {
        for (int col = 0; col < cols; ++col) {
            vterm_screen_get_cell(screen, VTermPos{row, col}, &cells[col]);
        }
        add_row(row_text(cells.data(), cols), continues()[row] != 0);
    }
    for (std::string& line : lines) line.erase(line.find_last_not_of(' ') + 1);
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    std::string out;
    for (const std::string& line : lines) {
        out += line;
        out += '\n';
    }
    return out;
}

VtermScreen::VtermScreen(int rows, int cols, size_t max_scrollback_rows)
    : impl_(std::make_unique<Impl>(rows, cols, max_scrollback_rows)) {}

VtermScreen::~VtermScreen() = default;

void VtermScreen::feed(std::string_view bytes) {
    impl_->feed(bytes);
}

std::string VtermScreen::text() const {
    return impl_->text();
}

}  // namespace caretz
