#include "agent/openai_api.h"

#include <catch2/catch.hpp>
#include <string>

#include "agent/model_error.h"

using namespace caretz;
using nlohmann::json;

namespace {

SseEvent data(const json& chunk) {
    return {"", chunk.dump()};
}

json delta(const json& d, const json& finish = nullptr) {
    return {{"choices", {{{"index", 0}, {"delta", d}, {"finish_reason", finish}}}}};
}

json tool_delta(const json& call) {
    return delta({{"tool_calls", {call}}});
}

}  // namespace

TEST_CASE("OpenAI stream: text streams out and tool call arguments are put together", "[openai]") {
    std::string shown;
    OpenAiStream stream([&](std::string_view t) { shown += t; });
    stream.feed(data(delta({{"role", "assistant"}, {"content", ""}})));
    stream.feed(data(delta({{"content", "Looking "}})));
    stream.feed(data(delta({{"content", "now."}})));
    stream.feed(data(tool_delta({{"index", 0},
                                 {"id", "call_a"},
                                 {"type", "function"},
                                 {"function", {{"name", "shell"}, {"arguments", ""}}}})));
    stream.feed(data(tool_delta({{"index", 0}, {"function", {{"arguments", "{\"comm"}}}})));
    stream.feed(
        data(tool_delta({{"index", 1},
                         {"id", "call_b"},
                         {"function", {{"name", "job_output"}, {"arguments", "{\"job_"}}}})));
    stream.feed(data(tool_delta({{"index", 0}, {"function", {{"arguments", "and\": \"ls\"}"}}}})));
    stream.feed(data(tool_delta({{"index", 1}, {"function", {{"arguments", "id\": 2}"}}}})));
    CHECK_FALSE(stream.complete());
    stream.feed(data(delta(json::object(), "tool_calls")));
    CHECK(stream.complete());
    stream.feed({"", "[DONE]"});

    AssistantReply reply = stream.reply();
    CHECK(shown == "Looking now.");
    CHECK(reply.text == "Looking now.");
    REQUIRE(reply.tool_calls.size() == 2);
    CHECK(reply.tool_calls[0] == ToolCall{"call_a", "shell", "{\"command\": \"ls\"}"});
    CHECK(reply.tool_calls[1] == ToolCall{"call_b", "job_output", "{\"job_id\": 2}"});
}

TEST_CASE("OpenAI stream: error fields of other types are reported, never thrown past",
          "[openai]") {
    OpenAiStream stream(nullptr);
    CHECK_NOTHROW(stream.feed(data({{"object", {{"not", "a string"}}}})));
    CHECK_THROWS_WITH(stream.feed(data({{"object", "error"}, {"message", {{"code", 5}}}})),
                      Catch::Contains("\"code\":5"));
    CHECK_THROWS_WITH(stream.feed(data({{"object", "error"}, {"message", "model overloaded"}})),
                      Catch::Contains("model overloaded"));
}

TEST_CASE("OpenAI stream: [DONE] alone completes it; a stream cut short does not", "[openai]") {
    OpenAiStream done(nullptr);
    done.feed(data(delta({{"content", "hi"}})));
    done.feed({"", "[DONE]"});
    CHECK(done.complete());

    OpenAiStream cut(nullptr);
    cut.feed(data(tool_delta(
        {{"index", 0}, {"id", "c"}, {"function", {{"name", "shell"}, {"arguments", "{\"co"}}}})));
    CHECK_FALSE(cut.complete());
    CHECK(cut.reply().tool_calls.at(0).arguments == "{\"co");
}

TEST_CASE("OpenAI stream: servers that send calls whole, without index or id", "[openai]") {
    OpenAiStream stream(nullptr);
    stream.feed(
        data(tool_delta({{"function", {{"name", "shell"}, {"arguments", {{"command", "a"}}}}}})));
    stream.feed(
        data(tool_delta({{"id", "x2"}, {"function", {{"name", "shell"}, {"arguments", "{}"}}}})));
    stream.feed(data(delta(json::object(), "tool_calls")));
    auto calls = stream.reply().tool_calls;
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].id == "call_0");
    CHECK(json::parse(calls[0].arguments) == json{{"command", "a"}});
    CHECK(calls[1].id == "x2");
}

TEST_CASE("OpenAI stream: a name repeated in every delta is kept once", "[openai]") {
    OpenAiStream stream(nullptr);
    for (const char* piece : {"{\"a\"", ":1}"})
        stream.feed(data(
            tool_delta({{"index", 0}, {"function", {{"name", "shell"}, {"arguments", piece}}}})));
    CHECK(stream.reply().tool_calls.at(0).name == "shell");
    CHECK(stream.reply().tool_calls.at(0).arguments == "{\"a\":1}");
}

TEST_CASE("OpenAI stream: errors in the stream and malformed events throw ModelError", "[openai]") {
    OpenAiStream stream(nullptr);
    CHECK_THROWS_AS(stream.feed({"", "{not json"}), ModelError);
    CHECK_THROWS_WITH(stream.feed(data({{"error", {{"message", "overloaded"}}}})),
                      Catch::Contains("overloaded"));
    CHECK_THROWS_WITH(stream.feed(data({{"object", "error"}, {"message", "bad model"}})),
                      Catch::Contains("bad model"));
    CHECK_NOTHROW(
        stream.feed(data({{"choices", json::array()}, {"usage", {{"total_tokens", 3}}}})));
}

TEST_CASE("OpenAI request: system first, tool calls and results, tools as functions", "[openai]") {
    Conversation c = {
        {Message::Role::user, "fix it", {}, {}},
        {Message::Role::assistant,
         "",
         {{"call_1", "shell", "{\"command\":\"ls\"}"}, {"call_2", "shell", "{broken"}},
         {}},
        {Message::Role::tool, "exit status: 0\n", {}, "call_1"},
    };
    json body = openai_request("m", "SYSTEM", c, {{"shell", "runs", {{"type", "object"}}}});
    CHECK(body["model"] == "m");
    CHECK(body["stream"] == true);
    const json& messages = body["messages"];
    REQUIRE(messages.size() == 4);
    CHECK(messages[0] == json{{"role", "system"}, {"content", "SYSTEM"}});
    CHECK(messages[1] == json{{"role", "user"}, {"content", "fix it"}});
    CHECK(messages[2]["content"].is_null());
    CHECK(messages[2]["tool_calls"][0]["function"]["arguments"] == "{\"command\":\"ls\"}");
    // Invalid arguments go back as {}: servers that render templates reject anything else.
    CHECK(messages[2]["tool_calls"][1]["function"]["arguments"] == "{}");
    CHECK(messages[3] ==
          json{{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "exit status: 0\n"}});
    CHECK(body["tools"][0]["type"] == "function");
    CHECK(body["tools"][0]["function"]["name"] == "shell");
    // The stream's last chunk reports the tokens, which tell how full the context is.
    CHECK(body["stream_options"] == json{{"include_usage", true}});
    // A request without tools (a summary) carries no empty list, which OpenAI refuses.
    CHECK_FALSE(openai_request("m", "S", c, {}).contains("tools"));
}

TEST_CASE("OpenAI stream: the usage chunk's tokens come with the reply", "[openai]") {
    OpenAiStream stream(nullptr);
    stream.feed(data(delta({{"content", "hi"}}, "stop")));
    stream.feed(data({{"choices", json::array()},
                      {"usage", {{"prompt_tokens", 9120}, {"completion_tokens", 14}}}}));
    CHECK(stream.reply().usage.input == 9120);
    CHECK(stream.reply().usage.output == 14);
}
