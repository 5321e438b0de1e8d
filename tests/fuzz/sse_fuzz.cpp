// The model's stream comes from a server Caretz does not control, cut wherever TCP cuts it.
// Whatever the bytes and the cuts: the SSE reader yields the same events as for one whole
// read, and both providers' assemblers take those events without crashing, failing only with
// ModelError; text they pass on is exactly the text of their reply.

#include <string>
#include <vector>

#include "agent/anthropic_api.h"
#include "agent/model_error.h"
#include "agent/openai_api.h"
#include "agent/sse_reader.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

namespace {

template <typename Stream>
void assemble(const std::vector<SseEvent>& events) {
    std::string streamed;
    Stream stream([&](std::string_view text) { streamed.append(text); });
    try {
        for (const auto& e : events) stream.feed(e);
    } catch (const ModelError&) {
        return;
    }
    require(stream.reply().text == streamed, "the reply's text differs from the text passed on");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    SseReader whole_reader;
    std::vector<SseEvent> whole = whole_reader.feed(input);
    SseReader chunked_reader;
    std::vector<SseEvent> chunked;
    for (std::string_view chunk : caretz::fuzz::chunks(input))
        for (auto& e : chunked_reader.feed(chunk)) chunked.push_back(std::move(e));
    require(chunked == whole, "cutting the stream changed its events");
    assemble<OpenAiStream>(whole);
    assemble<AnthropicStream>(whole);
    return 0;
}
