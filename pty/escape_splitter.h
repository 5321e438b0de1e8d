#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// Splits terminal output into runs of printable text and runs of control bytes and escape
// sequences, following libvterm 0.1.4's own parser so both agree on where text is, and tells
// which control runs may move the cursor to another row. VtermScreen uses it to tell a line
// that wrapped at the right margin from one that was ended by a newline or a cursor move.
// Escape sequences may be split across calls.
class EscapeSplitter {
public:
    struct Segment {
        std::string_view bytes;
        bool text = false;
        // A control completed in this segment that may move the cursor to another row or
        // rewrite the screen (newline, cursor positioning, erase, scroll, reset...). Colours,
        // titles, hyperlinks, carriage return, backspace, tab and bell do not.
        bool may_change_row = false;
    };

    // The segments of `bytes`, in order, as views into `bytes`; valid until the next call.
    const std::vector<Segment>& split(std::string_view bytes);

private:
    enum class State {
        ground,
        escape,
        csi_leader,
        csi_params,
        csi_intermediate,
        string,
        string_escape,
    };

    // Advances the state machine over one control byte; returns true if a control that may
    // change the row completed with it.
    bool step(unsigned char c);
    bool step_escape(unsigned char c);
    bool step_csi(unsigned char c);
    void add(std::string_view bytes, bool text, bool may_change_row);

    State state_ = State::ground;
    bool escape_has_intermediates_ = false;
    bool escape_has_hash_ = false;
    char csi_leader_ = 0;
    bool csi_has_intermediates_ = false;
    std::string csi_params_;
    std::vector<Segment> segments_;
};

}  // namespace caretz
