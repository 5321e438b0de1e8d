#include "agent/sse_reader.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace caretz;

namespace {

std::vector<SseEvent> read_in_pieces(const std::string& stream, size_t cut) {
    SseReader reader;
    std::vector<SseEvent> events;
    for (size_t start = 0; start < stream.size(); start += cut) {
        for (auto& e : reader.feed(std::string_view(stream).substr(start, cut)))
            events.push_back(std::move(e));
    }
    return events;
}

std::vector<SseEvent> read_split_at(const std::string& stream, size_t at) {
    SseReader reader;
    std::vector<SseEvent> events = reader.feed(std::string_view(stream).substr(0, at));
    for (auto& e : reader.feed(std::string_view(stream).substr(at))) events.push_back(std::move(e));
    return events;
}

}  // namespace

TEST_CASE("SSE: events come out whole wherever the stream is cut", "[sse]") {
    const std::string stream =
        ": a comment the server sends to keep the line open\r\n"
        "event: content_block_delta\r\n"
        "data: {\"a\":1}\r\n"
        "\r\n"
        "data: first line\n"
        "data:second line\n"
        "\n"
        "id: 7\r"
        "data: after a lone CR\r"
        "\r"
        "data: [DONE]\n\n";
    const std::vector<SseEvent> expected = {
        {"content_block_delta", "{\"a\":1}"},
        {"", "first line\nsecond line"},
        {"", "after a lone CR"},
        {"", "[DONE]"},
    };
    for (size_t at = 0; at <= stream.size(); ++at) {
        INFO("split at byte " << at);
        CHECK(read_split_at(stream, at) == expected);
    }
    for (size_t cut = 1; cut <= 5; ++cut) {
        INFO("pieces of " << cut << " bytes");
        CHECK(read_in_pieces(stream, cut) == expected);
    }
}

TEST_CASE("SSE: a CR at the end of one chunk and LF at the start of the next end one line",
          "[sse]") {
    SseReader reader;
    CHECK(reader.feed("data: x\r").empty());
    CHECK(reader.feed("\n").empty());
    CHECK(reader.feed("\r\n") == std::vector<SseEvent>{{"", "x"}});
}

TEST_CASE("SSE: events without data, and an unfinished event, are not dispatched", "[sse]") {
    SseReader reader;
    CHECK(reader.feed("event: ping\n\n").empty());
    CHECK(reader.feed(": keep-alive\n\n").empty());
    CHECK(reader.feed("data: cut off").empty());
}

TEST_CASE("SSE: the event type resets after each event; empty data still dispatches", "[sse]") {
    SseReader reader;
    auto events = reader.feed("event: a\ndata: 1\n\ndata\n\n");
    REQUIRE(events.size() == 2);
    CHECK(events[0] == SseEvent{"a", "1"});
    CHECK(events[1] == SseEvent{"", ""});
}
