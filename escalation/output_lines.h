#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace caretz {

// Turns raw terminal output into the lines a reader would see, for refusal detection. It sees
// every byte a command prints, so it is a small state machine with one reused line buffer, not a
// terminal emulator: escape sequences are dropped (except the few that move along or erase the
// current line), `\r` returns to column 0 so progress bars leave their final text, backspace
// steps back. Sequences may be split across feed() calls.
class OutputLines {
public:
    using LineCallback = std::function<void(std::string_view)>;
    // Longer lines keep their first kMaxLineBytes; nothing real hides evidence past that.
    static constexpr std::size_t kMaxLineBytes = 64 * 1024;

    explicit OutputLines(LineCallback on_line);

    void feed(std::string_view bytes);
    // Delivers the last line when it did not end with a newline.
    void finish();

private:
    enum class State {
        text,
        escape,                 // after ESC
        escape_intermediate,    // ESC followed by 0x20-0x2f bytes, e.g. ESC ( B
        csi,                    // ESC [ ... final byte
        osc,                    // ESC ] ... BEL or ST
        osc_escape,             // ESC inside an OSC: the start of ST
        control_string,         // DCS, SOS, PM, APC: ... ST
        control_string_escape,  // ESC inside one of those
    };

    void put_text(std::string_view bytes);
    void step(unsigned char c);
    void control(unsigned char c);
    void escape(unsigned char c);
    void csi(unsigned char c);
    void run_csi(unsigned char final_byte);
    void end_line();
    void move_to(std::size_t column);

    LineCallback on_line_;
    std::string line_;
    std::size_t column_ = 0;
    State state_ = State::text;
    unsigned csi_param_ = 0;    // the first numeric CSI parameter, which is all we use
    bool csi_first_ = true;     // still reading the first parameter
    bool csi_private_ = false;  // a private sequence (ESC [ ? ...): none of ours
};

}  // namespace caretz
