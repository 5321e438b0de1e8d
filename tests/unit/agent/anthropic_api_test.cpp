#include "agent/anthropic_api.h"

#include <catch2/catch.hpp>
#include <string>

#include "agent/model_error.h"

using namespace caretz;
using nlohmann::json;

namespace {

SseEvent event(const json& e) {
    return {e["type"].get<std::string>(), e.dump()};
}

json text_delta(int index, const char* text) {
    return {{"type", "content_block_delta"},
            {"index", index},
            {"delta", {{"type", "text_delta"}, {"text", text}}}};
}

json json_delta(int index, const char* partial) {
    return {{"type", "content_block_delta"},
            {"index", index},
            {"delta", {{"type", "input_json_delta"}, {"partial_json", partial}}}};
}

}  // namespace

TEST_CASE("Anthropic stream: text blocks stream and tool_use input is put together",
          "[anthropic]") {
    std::string shown;
    AnthropicStream stream([&](std::string_view t) { shown += t; });
    stream.feed(event({{"type", "message_start"}, {"message", {{"id", "msg"}}}}));
    stream.feed(event({{"type", "ping"}}));
    stream.feed(event({{"type", "content_block_start"},
                       {"index", 0},
                       {"content_block", {{"type", "text"}, {"text", ""}}}}));
    stream.feed(event(text_delta(0, "Check")));
    stream.feed(event(text_delta(0, "ing.")));
    stream.feed(event({{"type", "content_block_stop"}, {"index", 0}}));
    stream.feed(event({{"type", "content_block_start"},
                       {"index", 1},
                       {"content_block",
                        {{"type", "tool_use"},
                         {"id", "toolu_1"},
                         {"name", "shell"},
                         {"input", json::object()}}}}));
    stream.feed(event(json_delta(1, "")));
    stream.feed(event(json_delta(1, "{\"command\": \"df")));
    stream.feed(event(json_delta(1, " -h\"}")));
    stream.feed(event({{"type", "content_block_stop"}, {"index", 1}}));
    stream.feed(event({{"type", "content_block_start"},
                       {"index", 2},
                       {"content_block",
                        {{"type", "tool_use"},
                         {"id", "toolu_2"},
                         {"name", "job_output"},
                         {"input", json::object()}}}}));
    stream.feed(event({{"type", "message_delta"}, {"delta", {{"stop_reason", "tool_use"}}}}));
    CHECK_FALSE(stream.complete());
    stream.feed(event({{"type", "message_stop"}}));
    CHECK(stream.complete());

    AssistantReply reply = stream.reply();
    CHECK(shown == "Checking.");
    CHECK(reply.text == "Checking.");
    REQUIRE(reply.tool_calls.size() == 2);
    CHECK(reply.tool_calls[0] == ToolCall{"toolu_1", "shell", "{\"command\": \"df -h\"}"});
    // A tool_use without input deltas has empty input.
    CHECK(reply.tool_calls[1] == ToolCall{"toolu_2", "job_output", "{}"});
}

TEST_CASE("Anthropic stream: a stream cut mid-tool-call is not complete", "[anthropic]") {
    AnthropicStream stream(nullptr);
    stream.feed(event({{"type", "content_block_start"},
                       {"index", 0},
                       {"content_block", {{"type", "tool_use"}, {"id", "t"}, {"name", "shell"}}}}));
    stream.feed(event(json_delta(0, "{\"comm")));
    CHECK_FALSE(stream.complete());
    CHECK(stream.reply().tool_calls.at(0).arguments == "{\"comm");
}

TEST_CASE("Anthropic stream: error events and malformed data throw ModelError", "[anthropic]") {
    AnthropicStream stream(nullptr);
    CHECK_THROWS_WITH(
        stream.feed(event({{"type", "error"},
                           {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}})),
        Catch::Contains("Overloaded") && Catch::Contains("overloaded_error"));
    CHECK_THROWS_AS(stream.feed({"content_block_delta", "{\"type\": "}), ModelError);
}

TEST_CASE("Anthropic stream: an index of the wrong type does not throw", "[anthropic]") {
    AnthropicStream stream(nullptr);
    json start = {{"type", "content_block_start"},
                  {"index", "one"},
                  {"content_block", {{"type", "tool_use"}, {"id", "t"}, {"name", "shell"}}}};
    CHECK_NOTHROW(stream.feed(event(start)));
    json delta = json_delta(0, "{}");
    delta["index"] = {{"nested", true}};
    CHECK_NOTHROW(stream.feed(event(delta)));
    REQUIRE(stream.reply().tool_calls.size() == 1);
    CHECK(stream.reply().tool_calls[0].arguments == "{}");
}

TEST_CASE("Anthropic request: tool results ride in user messages, one role per message",
          "[anthropic]") {
    Conversation c = {
        {Message::Role::user, "why is disk full", {}, {}},
        {Message::Role::assistant,
         "Looking.",
         {{"t1", "shell", "{\"command\":\"df\"}"}, {"t2", "shell", "{oops"}},
         {}},
        {Message::Role::tool, "exit status: 0\n", {}, "t1"},
        {Message::Role::tool, "error: bad", {}, "t2"},
        {Message::Role::user, "and now?", {}, {}},
        {Message::Role::assistant, "", {}, {}},
        {Message::Role::user, "hello?", {}, {}},
    };
    json body =
        anthropic_request("claude", "SYS", c, {{"shell", "runs", {{"type", "object"}}}}, 1000);
    CHECK(body["system"] == "SYS");
    CHECK(body["max_tokens"] == 1000);
    CHECK(body["tools"][0] ==
          json{{"name", "shell"}, {"description", "runs"}, {"input_schema", {{"type", "object"}}}});
    CHECK_FALSE(anthropic_request("claude", "S", c, {}, 1000).contains("tools"));
    const json& m = body["messages"];
    REQUIRE(m.size() == 3);
    CHECK(m[0]["role"] == "user");
    CHECK(m[1]["role"] == "assistant");
    CHECK(m[1]["content"][0] == json{{"type", "text"}, {"text", "Looking."}});
    CHECK(m[1]["content"][1]["input"] == json{{"command", "df"}});
    CHECK(m[1]["content"][2]["input"] == json::object());
    // Both results, the next prompt, and the prompt after an empty reply share one message.
    CHECK(m[2]["role"] == "user");
    REQUIRE(m[2]["content"].size() == 4);
    CHECK(m[2]["content"][0] ==
          json{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", "exit status: 0\n"}});
    CHECK(m[2]["content"][1]["tool_use_id"] == "t2");
    CHECK(m[2]["content"][2] == json{{"type", "text"}, {"text", "and now?"}});
    CHECK(m[2]["content"][3] == json{{"type", "text"}, {"text", "hello?"}});
}

TEST_CASE("Anthropic stream: usage counts cached prompt tokens too, and the answer's",
          "[anthropic]") {
    AnthropicStream stream(nullptr);
    stream.feed(event({{"type", "message_start"},
                       {"message",
                        {{"id", "msg"},
                         {"usage",
                          {{"input_tokens", 120},
                           {"cache_creation_input_tokens", 3000},
                           {"cache_read_input_tokens", 50000},
                           {"output_tokens", 1}}}}}}));
    stream.feed(event({{"type", "message_delta"},
                       {"delta", {{"stop_reason", "end_turn"}}},
                       {"usage", {{"output_tokens", 321}}}}));
    stream.feed(event({{"type", "message_stop"}}));
    CHECK(stream.reply().usage.input == 53120);
    CHECK(stream.reply().usage.output == 321);
}
