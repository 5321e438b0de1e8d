#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// One server-sent event: its type (empty when the server gave none) and its data lines
// joined with '\n'.
struct SseEvent {
    std::string event;
    std::string data;

    bool operator==(const SseEvent&) const = default;
};

// Turns a text/event-stream, arriving in chunks cut anywhere (inside a line, between CR and
// LF), into events, as the HTML living standard's event-stream rules say: lines end with CRLF,
// LF or CR; a blank line dispatches; lines starting with ':' are comments; an event without
// data is dropped. Pure: no I/O.
class SseReader {
public:
    // Appends `bytes` and returns the events they completed.
    std::vector<SseEvent> feed(std::string_view bytes);

private:
    void take_line(std::string_view line, std::vector<SseEvent>& events);

    std::string line_;
    bool after_cr_ = false;  // the last byte was CR: a following LF ends nothing
    std::string event_;
    std::string data_;
    bool has_data_ = false;
};

}  // namespace caretz
