#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace caretz {

// A libvterm screen that turns a command's terminal output into the plain text a reader would
// see: colours dropped, '\r' progress bars collapsed, cursor movement applied, full-screen
// programs on the alternate screen kept apart from the normal one.
//
// Lines longer than the width come back whole. libvterm 0.1.4 does not record which rows
// wrapped at the right margin (later versions do, in VTermLineInfo.continuation), so this
// class tracks it itself: a character that lands in column 0 of the row below the previous
// character, with nothing between them that could move the cursor to another row, was put
// there by autowrap. The marks follow rows through scrolls and into the scrollback. The one
// case it cannot tell: a control that can move the cursor or erase (other than colours,
// titles, '\r', backspace or tab), sent exactly at the wrap point, splits the line in two.
class VtermScreen {
public:
    // At most `max_scrollback_rows` rows that scrolled off the top are kept; older ones are
    // dropped, so memory stays bounded whatever the output size.
    VtermScreen(int rows, int cols, size_t max_scrollback_rows);
    ~VtermScreen();
    VtermScreen(const VtermScreen&) = delete;
    VtermScreen& operator=(const VtermScreen&) = delete;

    void feed(std::string_view bytes);

    // Scrollback then the current screen as UTF-8, one line per line of output: rows joined
    // where the output wrapped, trailing spaces trimmed, trailing empty lines dropped.
    std::string text() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace caretz
