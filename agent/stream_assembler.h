#pragma once

#include <functional>
#include <string_view>

#include "agent/conversation.h"
#include "agent/sse_reader.h"

namespace caretz {

// Builds the model's reply from the events of one streamed answer, passing text on as it
// arrives. Pure: the events come from the caller.
class StreamAssembler {
public:
    using TextSink = std::function<void(std::string_view)>;

    virtual ~StreamAssembler() = default;
    // Takes the next event. Throws ModelError for an event that is not valid JSON or that
    // reports an error.
    virtual void feed(const SseEvent& event) = 0;
    // True once the stream said that the answer is whole; a stream that ends before is cut.
    virtual bool complete() const = 0;
    // The reply so far: text, and tool calls with their arguments in the order they began.
    virtual AssistantReply reply() const = 0;
};

}  // namespace caretz
