#include <catch2/catch.hpp>
#include <string>

#include "agent/compaction.h"
#include "agent/context_budget.h"
#include "agent/context_window.h"

using namespace caretz;

namespace {

Message user(std::string text) {
    return {Message::Role::user, std::move(text), {}, {}};
}

Message call(const std::string& id, const std::string& command) {
    return {Message::Role::assistant,
            "",
            {{id, "shell", nlohmann::json{{"command", command}}.dump()}},
            {}};
}

Message result(const std::string& id, std::string text) {
    return {Message::Role::tool, std::move(text), {}, id};
}

Message answer(std::string text) {
    return {Message::Role::assistant, std::move(text), {}, {}};
}

std::string log_lines(int lines) {
    std::string out;
    for (int i = 0; i < lines; ++i)
        out += "Dec 05 22:01:" + std::to_string(10 + i % 50) + " db1 postgres[812]: checkpoint " +
               std::to_string(i) + "\n";
    return out;
}

}  // namespace

// What each server answers when a request does not fit, as their sources and public reports
// show the bodies (OpenAI, Anthropic, llama.cpp's server, Ollama with truncation off, vLLM).
TEST_CASE("context overflow: each server's own words are recognised, with the window stated",
          "[context]") {
    struct Case {
        const char* server;
        long status;
        std::string body;
        long window, requested;
    };
    const Case cases[] = {
        {"OpenAI chat completions", 400,
         R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130567 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})",
         128000, 130567},
        {"OpenAI, newer wording", 400,
         R"({"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}})",
         0, 0},
        {"Anthropic", 400,
         R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CV"})",
         200000, 208310},
        {"OpenAI, newer models", 400,
         R"({"error":{"message":"Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 272500 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})",
         272000, 272500},
        {"Anthropic, with the answer's room", 400,
         R"({"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000, decrease input length or `max_tokens` and try again"}})",
         191808, 195000},
        {"llama.cpp server", 400,
         R"({"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}})",
         4096, 4476},
        {"llama.cpp server, older", 400,
         R"({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"invalid_request_error"}})",
         0, 0},
        {"Ollama", 400, R"({"error":"the input length exceeds the context length"})", 0, 0},
        {"vLLM", 400,
         R"({"object":"error","message":"This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})",
         16384, 122946},
        {"vLLM scheduler", 400,
         R"({"object":"error","message":"Input prompt (35247 tokens) is too long and exceeds limit of 32768","type":"BadRequestError","code":400})",
         32768, 35247},
        {"an error in the stream", 0,
         "the model API reported: This model's maximum context length is 8,192 tokens. However, "
         "your messages resulted in 9,100 tokens.",
         8192, 9100},
    };
    for (const auto& c : cases) {
        INFO(c.server);
        auto overflow = context_overflow(c.status, c.body);
        REQUIRE(overflow);
        CHECK(overflow->window == c.window);
        CHECK(overflow->requested == c.requested);
    }
}

TEST_CASE("context overflow: other refusals are not taken for one", "[context]") {
    const std::pair<long, std::string> others[] = {
        {429,
         R"({"error":{"message":"Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.","type":"tokens","code":"rate_limit_exceeded"}})"},
        {400,
         R"({"error":{"message":"Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 41 instead.","type":"invalid_request_error","code":"string_above_max_length"}})"},
        {400,
         R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5"}})"},
        {401, R"({"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}})"},
        {500, "This model's maximum context length is 8192 tokens"},
        {400, "<html><body>Bad Request</body></html>"},
    };
    for (const auto& [status, body] : others) {
        INFO(body);
        CHECK_FALSE(context_overflow(status, body));
    }
}

TEST_CASE("known windows: hosted models by prefix, local ones unknown", "[context]") {
    CHECK(known_context_window("gpt-4o-mini") == 128000);
    CHECK(known_context_window("gpt-4") == 8192);
    CHECK(known_context_window("gpt-4.1-mini") == 1047576);
    CHECK(known_context_window("claude-sonnet-4-5") == 200000);
    CHECK(known_context_window("llama3.1:8b") == 0);
    CHECK(known_context_window("e2e-model") == 0);
}

TEST_CASE("context budget: the configured window wins, usage calibrates, a refusal lowers it",
          "[context]") {
    ContextBudget configured(10000, "gpt-4o");
    CHECK(configured.window() == 10000);
    CHECK(configured.window_source() == "model.context_window");

    ContextBudget budget(0, "local-model");
    CHECK(budget.window() == 0);
    CHECK_FALSE(budget.needs_compaction(10'000'000));  // nothing to go by yet
    CHECK(budget.result_limit() == kResultOutputLimit);

    // The server refused 60,000 bytes and stated a window of 8,000 tokens.
    budget.observe(60000, 15000);  // 4 bytes a token
    budget.refused(60000, 8000);
    CHECK(budget.window() == 8000);
    CHECK(budget.window_source() == "the server's error");
    CHECK(budget.known_too_large(60000));
    CHECK(budget.needs_compaction(60000));
    CHECK(budget.needs_compaction(4 * 6001));  // past three quarters of the window
    CHECK_FALSE(budget.needs_compaction(4 * 5999));
    CHECK(budget.target_bytes() == 4 * 3200);
    CHECK(budget.result_limit() == 3200);  // a tenth of the window

    // A refusal that states no window: the window is below what was refused.
    ContextBudget unstated(0, "local-model");
    unstated.refused(30000, 0);
    CHECK(unstated.window() == 9999);
    CHECK(unstated.target_bytes() <= 15000);

    // A new model takes its own window and forgets what the old one refused.
    budget.set_model("gpt-4o");
    CHECK(budget.window() == 128000);
    CHECK_FALSE(budget.known_too_large(60000));
}

TEST_CASE("compaction: an old result keeps where it ran, its exit status and its last line",
          "[context]") {
    const std::string outside =
        "[Caretz: this command ran OUTSIDE the sandbox, directly on the user's machine, after the "
        "user approved it. Its output reflects host access, not sandbox access.]\n";
    const std::string full = outside + "exit status: 3\n" + log_lines(100) + "FATAL: disk full\n";
    const std::string cut = shrunk_result(full);
    CHECK(cut.starts_with(outside + "exit status: 3\n[Caretz: the output was left out"));
    CHECK(cut.ends_with("Its last line was:]\nFATAL: disk full\n"));
    CHECK(cut.size() < 700);
    CHECK(shrunk_result(cut) == cut);  // never cut twice
    CHECK(shrunk_result("exit status: 0\nok\n") == "exit status: 0\nok\n");
}

TEST_CASE("compaction: old results go first, the newest stay whole", "[context]") {
    Conversation c = {user("the database listens on port 6543; find why backups fail"),
                      call("1", "journalctl -u pg"),
                      result("1", "exit status: 0\n" + log_lines(400)),
                      call("2", "df -h"),
                      result("2", "exit status: 0\n" + log_lines(300)),
                      call("3", "ls /backups"),
                      result("3", "exit status: 0\n" + log_lines(200)),
                      answer("The disk is full.")};
    const size_t before = conversation_bytes(c);
    CHECK(shrink_old_results(c, 2, 0, 0) == 1);
    CHECK(c[2].text.find("[Caretz: the output was left out") != std::string::npos);
    CHECK(c[4].text == "exit status: 0\n" + log_lines(300));
    CHECK(c[6].text == "exit status: 0\n" + log_lines(200));
    CHECK(c[0].text.find("6543") != std::string::npos);
    CHECK(c[1].tool_calls[0].arguments.find("journalctl") != std::string::npos);
    CHECK(conversation_bytes(c) < before);
    // Enough already: nothing more is cut.
    Conversation small = c;
    CHECK(shrink_old_results(small, 0, conversation_bytes(small), 0) == 0);
}

TEST_CASE("compaction: the verbatim tail never starts at a result, the summary replaces the rest",
          "[context]") {
    Conversation c = {user("first: the API key rotation is due on Friday"),
                      call("1", "cat /etc/app.conf"),
                      result("1", "exit status: 0\n" + log_lines(50)),
                      answer("Found it."),
                      user("second request"),
                      call("2", "uptime"),
                      result("2", "exit status: 0\nup 3 days\n"),
                      answer("Up 3 days.")};
    // A tail of a few hundred bytes: from the last call on, not from its result.
    size_t start = verbatim_tail_start(c, 150);
    REQUIRE(start < c.size());
    CHECK(c[start].role != Message::Role::tool);
    CHECK(start == 5);
    // However small the room, the last message stays.
    CHECK(verbatim_tail_start(c, 0) == 7);

    const std::string source = summary_source(Conversation(c.begin(), c.begin() + 5), 100000);
    CHECK(source.find("USER:\nfirst: the API key rotation is due on Friday") != std::string::npos);
    CHECK(source.find("(called shell: cat /etc/app.conf)") != std::string::npos);

    Conversation after = compacted(c, start, "Rotation due Friday; second request pending.", true);
    REQUIRE(after.size() == 4);
    CHECK(after[0].role == Message::Role::user);
    CHECK(
        after[0].text.starts_with("[Caretz: the earlier part of this conversation was compacted"));
    CHECK(after[0].text.find("written by the model") != std::string::npos);
    // The user's latest request was summarized away: it comes along verbatim.
    CHECK(
        after[0].text.ends_with("[Caretz: the user's latest request, verbatim:]\nsecond request"));
    CHECK(after[1].tool_calls[0].id == "2");
    CHECK(after[2].tool_call_id == "2");
}

TEST_CASE("compaction: a summary source too large loses its middle, not its start or end",
          "[context]") {
    Conversation c = {user("GOAL: restore the replica"), result("1", log_lines(2000)),
                      answer("LATEST: replica lag is 0")};
    const std::string source = summary_source(c, 4000);
    CHECK(source.size() <= 4000);
    CHECK(source.find("GOAL: restore the replica") != std::string::npos);
    CHECK(source.find("LATEST: replica lag is 0") != std::string::npos);
    CHECK(source.find("the middle was left out") != std::string::npos);
}

TEST_CASE("compaction: the summary's instruction hints at no way out of the sandbox", "[context]") {
    // The model learns that a command can run outside only from an approved rerun's note.
    const std::string text = summary_instruction("the incident number");
    for (const char* word :
         {"outside", "approv", "rerun", "escalat", "permission", "offer", "allow"})
        CHECK(text.find(word) == std::string::npos);
    CHECK(text.ends_with("The user asks you to keep especially: the incident number"));
}

TEST_CASE("compaction: without the model, Caretz lists the requests and commands", "[context]") {
    Conversation c = {user("why is nginx down?"), call("1", "systemctl status nginx"),
                      result("1", "exit status: 3\ninactive (dead)\n"), answer("It is stopped.")};
    const std::string plain = plain_summary(c, 4096);
    CHECK(plain ==
          "- the user: why is nginx down?\n- ran systemctl status nginx: exit status: 3\n");
    Conversation after = compacted(c, 3, plain, false);
    CHECK(after[0].text.find("the model could not summarize it") != std::string::npos);
    CHECK(after[0].text.find("systemctl status nginx") != std::string::npos);
}
