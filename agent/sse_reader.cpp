#include "agent/sse_reader.h"

namespace caretz {

std::vector<SseEvent> SseReader::feed(std::string_view bytes) {
    std::vector<SseEvent> events;
    for (char c : bytes) {
        if (c == '\n' && after_cr_) {
            after_cr_ = false;
            continue;
        }
        after_cr_ = c == '\r';
        if (c == '\r' || c == '\n') {
            take_line(line_, events);
            line_.clear();
        } else {
            line_ += c;
        }
    }
    return events;
}

void SseReader::take_line(std::string_view line, std::vector<SseEvent>& events) {
    if (line.empty()) {
        if (has_data_) events.push_back({std::move(event_), std::move(data_)});
        event_.clear();
        data_.clear();
        has_data_ = false;
        return;
    }
    if (line[0] == ':') return;
    auto colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value;
    if (colon != std::string_view::npos) {
        value = line.substr(colon + 1);
        if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
    }
    if (field == "event") {
        event_ = value;
    } else if (field == "data") {
        if (has_data_) data_ += '\n';
        data_ += value;
        has_data_ = true;
    }
}

}  // namespace caretz
