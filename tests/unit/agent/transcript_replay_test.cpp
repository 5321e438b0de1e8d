#include "agent/transcript_replay.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/transcript.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;

namespace {

const std::string kHeader =
    R"({"type":"session","session_id":"abc123","provider":"openai","model":"m1",)"
    R"("base_url":"http://x/v1","cwd":"/home/u/ws","time":"2026-12-05T22:00:00Z"})";

ReplayedConversation replay(const std::string& entries) {
    std::istringstream in(kHeader + "\n" + entries);
    return replay_transcript(in, "/state/sessions/abc123.jsonl");
}

// The message as role:text, with calls or the call answered, to compare at a glance.
std::string shown(const Message& m) {
    static const char* roles[] = {"user", "assistant", "tool"};
    std::string out = std::string(roles[static_cast<int>(m.role)]) + ":" + m.text;
    for (const auto& c : m.tool_calls) out += " [" + c.id + " " + c.name + " " + c.arguments + "]";
    if (!m.tool_call_id.empty()) out += " <" + m.tool_call_id;
    return out;
}

std::vector<std::string> shown(const Conversation& conversation) {
    std::vector<std::string> out;
    for (const auto& m : conversation) out.push_back(shown(m));
    return out;
}

std::string damage_of(const std::string& entries) {
    try {
        replay(entries);
    } catch (const TranscriptDamaged& e) {
        return e.what();
    }
    return "not damaged";
}

}  // namespace

TEST_CASE("replay: the main agent's turns rebuild the conversation", "[transcript_replay]") {
    ReplayedConversation r = replay(
        R"({"type":"user","agent":"main","text":"the db is db7","plan_mode":false,"time":"t"})"
        "\n"
        R"({"type":"assistant","agent":"main","text":"Looking.","tool_calls":[{"id":"c1","name":"shell","arguments":"{\"command\":\"ls\"}"}],"interrupted":false,"time":"t"})"
        "\n"
        R"({"type":"tool_result","agent":"main","tool_call_id":"c1","tool":"shell","result":"exit status: 0\na\n","ran":"sandbox","time":"t"})"
        "\n"
        R"({"type":"assistant","agent":"main","text":"One file.","tool_calls":[],"interrupted":false,"time":"t"})"
        "\n"
        R"({"type":"user_command","command":"ls","ran":"sandbox","exit_code":0,"time":"t"})"
        "\n"
        R"({"type":"user","agent":"main","text":"next","time":"t"})"
        "\n"
        R"({"type":"error","agent":"main","text":"HTTP 500","time":"t"})"
        "\n"
        R"({"type":"assistant","agent":"main","text":"cut sh","tool_calls":[],"interrupted":true,"time":"t"})"
        "\n"
        R"({"type":"interrupted","agent":"main","time":"t"})"
        "\n");
    CHECK(r.session_id == "abc123");
    CHECK(r.cwd == "/home/u/ws");
    CHECK(r.model == "m1");
    CHECK(r.interrupted_calls == 0);
    CHECK(shown(r.conversation) == std::vector<std::string>{
                                       "user:the db is db7",
                                       R"(assistant:Looking. [c1 shell {"command":"ls"}])",
                                       "tool:exit status: 0\na\n <c1",
                                       "assistant:One file.",
                                       "user:next",
                                       "assistant:cut sh",
                                   });
}

TEST_CASE("replay: subagents' entries stay out of the main conversation", "[transcript_replay]") {
    ReplayedConversation r = replay(
        R"({"type":"user","agent":"main","text":"ask a helper"})"
        "\n"
        R"({"type":"assistant","agent":"main","text":"","tool_calls":[{"id":"c1","name":"subagent","arguments":"{}"}]})"
        "\n"
        R"({"type":"user","agent":"subagent 1","text":"sub prompt"})"
        "\n"
        R"({"type":"assistant","agent":"subagent 1","text":"sub answer","tool_calls":[]})"
        "\n"
        R"({"type":"clear","agent":"subagent 1"})"
        "\n"
        R"({"type":"tool_result","agent":"main","tool_call_id":"c1","tool":"subagent","result":"sub answer"})"
        "\n");
    CHECK(shown(r.conversation) == std::vector<std::string>{"user:ask a helper",
                                                            "assistant: [c1 subagent {}]",
                                                            "tool:sub answer <c1"});
}

TEST_CASE("replay: a tool call the session ended during is closed as interrupted",
          "[transcript_replay]") {
    const std::string two_calls =
        R"({"type":"user","agent":"main","text":"run two"})"
        "\n"
        R"({"type":"assistant","agent":"main","text":"","tool_calls":[{"id":"c1","name":"shell","arguments":"{}"},{"id":"c2","name":"shell","arguments":"{}"}]})"
        "\n"
        R"({"type":"tool_result","agent":"main","tool_call_id":"c1","tool":"shell","result":"r1"})"
        "\n";
    SECTION("at the end of the transcript") {
        ReplayedConversation r = replay(two_calls);
        CHECK(r.interrupted_calls == 1);
        REQUIRE(r.conversation.size() == 4);
        CHECK(r.conversation[2].tool_call_id == "c1");
        CHECK(r.conversation[3].role == Message::Role::tool);
        CHECK(r.conversation[3].tool_call_id == "c2");
        CHECK(r.conversation[3].text == kInterruptedByEnd);
    }
    SECTION("before the next prompt, where both APIs need the result") {
        ReplayedConversation r =
            replay(two_calls + R"({"type":"user","agent":"main","text":"again"})" + "\n");
        CHECK(r.interrupted_calls == 1);
        CHECK(shown(r.conversation).back() == "user:again");
        CHECK(shown(r.conversation)[3] == std::string("tool:") + kInterruptedByEnd + " <c2");
    }
}

TEST_CASE("replay: compaction replaces the conversation, clear empties it, model switches",
          "[transcript_replay]") {
    ReplayedConversation r = replay(
        R"({"type":"user","agent":"main","text":"old"})"
        "\n"
        R"({"type":"assistant","agent":"main","text":"old answer","tool_calls":[]})"
        "\n"
        R"({"type":"compaction","agent":"main","conversation":[{"role":"user","text":"summary: the db is db7"},{"role":"assistant","text":"ok"}]})"
        "\n"
        R"({"type":"model","model":"m2"})"
        "\n"
        R"({"type":"user","agent":"main","text":"after"})"
        "\n");
    CHECK(r.model == "m2");
    CHECK(shown(r.conversation) ==
          std::vector<std::string>{"user:summary: the db is db7", "assistant:ok", "user:after"});

    r = replay(
        R"({"type":"user","agent":"main","text":"old"})"
        "\n"
        R"({"type":"assistant","agent":"main","text":"","tool_calls":[{"id":"c1","name":"shell","arguments":"{}"}]})"
        "\n"
        R"({"type":"clear","agent":"main"})"
        "\n"
        R"({"type":"user","agent":"main","text":"fresh"})"
        "\n");
    CHECK(r.interrupted_calls == 0);
    CHECK(shown(r.conversation) == std::vector<std::string>{"user:fresh"});
}

TEST_CASE("replay: every result answers a call of the reply before it", "[transcript_replay]") {
    // A compaction in the middle of a turn: its last reply's call is answered by the entry
    // that follows it.
    ReplayedConversation r = replay(
        R"({"type":"compaction","agent":"main","conversation":[{"role":"user","text":"u"},{"role":"assistant","text":"","tool_calls":[{"id":"c1","name":"shell","arguments":"{}"},{"id":"c2","name":"shell","arguments":"{}"}]},{"role":"tool","text":"r1","tool_call_id":"c1"}]})"
        "\n"
        R"({"type":"tool_result","agent":"main","tool_call_id":"c2","tool":"shell","result":"r2"})"
        "\n"
        R"({"type":"tool_result","agent":"main","tool_call_id":"c9","tool":"shell","result":"stray"})"
        "\n"
        R"({"type":"user","agent":"main","text":"next"})"
        "\n");
    CHECK(r.interrupted_calls == 0);
    CHECK(shown(r.conversation) ==
          std::vector<std::string>{"user:u", "assistant: [c1 shell {}] [c2 shell {}]",
                                   "tool:r1 <c1", "tool:r2 <c2", "user:next"});
}

TEST_CASE("replay: unknown entry types are skipped", "[transcript_replay]") {
    ReplayedConversation r = replay(R"({"type":"resumed","caretz_session":"def"})"
                                    "\n"
                                    R"({"type":"from_the_future","agent":"main","stuff":[1,2]})"
                                    "\n"
                                    R"({"type":"user","agent":"main","text":"hi"})"
                                    "\n");
    CHECK(shown(r.conversation) == std::vector<std::string>{"user:hi"});
}

TEST_CASE("replay: a damaged line is an error naming the file and the line",
          "[transcript_replay]") {
    const std::string prompt = R"({"type":"user","agent":"main","text":"hi"})"
                               "\n";
    CHECK(damage_of(prompt + "{\"type\":\"user\",\"agent\":\"ma\n") ==
          "the transcript /state/sessions/abc123.jsonl is damaged at line 3: it is not JSON; "
          "nothing of it was loaded. Mend or delete that line to resume it");
    CHECK_THAT(damage_of(prompt + R"({"type":"user","agent":"main","text":7})" + "\n"),
               Catch::Contains("at line 3: \"text\" must be a string"));
    CHECK_THAT(
        damage_of(R"({"type":"assistant","agent":"main","text":"","tool_calls":[{"id":"c"}]})"
                  "\n"),
        Catch::Contains("at line 2: \"name\" must be a string"));
    CHECK_THAT(damage_of(R"({"type":"tool_result","agent":"main","tool_call_id":"c1"})"
                         "\n"),
               Catch::Contains("at line 2: \"result\" must be a string"));
    CHECK_THAT(damage_of(R"({"type":"compaction","agent":"main","conversation":[{"role":"x"}]})"
                         "\n"),
               Catch::Contains("at line 2: its \"conversation\" is not one"));
    CHECK_THAT(damage_of(R"({"type":"model"})"
                         "\n"),
               Catch::Contains("at line 2: \"model\" must be a string"));
    CHECK_THAT(damage_of(R"({"type":"user","text":"whose?"})"
                         "\n"),
               Catch::Contains("at line 2: \"agent\" must be a string"));
    CHECK_THAT(damage_of("[1]\n"), Catch::Contains("at line 2: an entry must be a JSON object"));

    std::istringstream no_header(prompt);
    CHECK_THROWS_WITH(replay_transcript(no_header, "f"),
                      Catch::Contains("at line 1: the first line must be the session's header"));
    // Found by the fuzzer: a field of another type than the one looked for.
    std::istringstream number_type(R"({"type":3333})");
    CHECK_THROWS_WITH(replay_transcript(number_type, "f"),
                      Catch::Contains("at line 1: the first line must be the session's header"));
    std::istringstream empty("");
    CHECK_THROWS_WITH(replay_transcript(empty, "f"), Catch::Contains("the file is empty"));
}

TEST_CASE("saved conversations: this folder's, the latest written first, by id or prefix",
          "[transcript_replay]") {
    TempDir dir;
    auto write = [&](const std::string& id, const std::string& cwd, const std::string& lines,
                     long mtime) {
        std::string path = (dir.path() / (id + ".jsonl")).string();
        std::ofstream(path) << R"({"type":"session","session_id":")" << id
                            << R"(","model":"m","cwd":")" << cwd
                            << R"(","time":"2026-12-05T22:00:00Z"})"
                            << "\n"
                            << lines;
        struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
        REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    };
    write("aa11", "/ws",
          R"({"type":"user","agent":"subagent 1","text":"not this"})"
          "\n"
          R"({"type":"user","agent":"main","text":"first of aa11"})"
          "\n",
          1000);
    write("aa22", "/ws",
          R"({"type":"user","agent":"main","text":"first of aa22"})"
          "\n",
          3000);
    write("bb33", "/ws", "", 2000);
    write("cc44", "/elsewhere",
          R"({"type":"user","agent":"main","text":"x"})"
          "\n",
          4000);
    std::ofstream(dir.path() / "broken.jsonl") << "not json\n";
    std::ofstream(dir.path() / "odd.jsonl") << R"({"type":1,"cwd":"/ws"})"
                                            << "\n";

    std::vector<SavedConversation> list = saved_conversations(dir.path().string(), "/ws");
    REQUIRE(list.size() == 3);
    CHECK(list[0].session_id == "aa22");
    CHECK(list[0].first_prompt == "first of aa22");
    CHECK(list[1].session_id == "bb33");
    CHECK(list[1].first_prompt.empty());
    CHECK(list[2].session_id == "aa11");
    CHECK(list[2].first_prompt == "first of aa11");
    CHECK(list[2].started == "2026-12-05T22:00:00Z");
    CHECK(list[2].bytes > 0);

    CHECK(find_conversation(list, "bb").session_id == "bb33");
    CHECK(find_conversation(list, "aa11").session_id == "aa11");
    CHECK_THROWS_WITH(find_conversation(list, "aa"), Catch::Contains("begins 2 conversations"));
    CHECK_THROWS_WITH(find_conversation(list, "cc44"),
                      Catch::Contains("no conversation started in this folder has the id cc44"));
    CHECK(saved_conversations((dir.path() / "missing").string(), "/ws").empty());
}

TEST_CASE("transcript lock: one process at a time holds a transcript", "[transcript_replay]") {
    TempDir dir;
    std::string path = (dir.path() / "s.jsonl").string();
    std::ofstream(path) << kHeader << "\n";
    std::optional<TranscriptLock> first = TranscriptLock::take(path);
    REQUIRE(first);
    // flock conflicts between open files even within one process, as between two Caretz.
    CHECK_FALSE(TranscriptLock::take(path));
    first.reset();
    CHECK(TranscriptLock::take(path));
    CHECK_THROWS(TranscriptLock::take((dir.path() / "none.jsonl").string()));
}

TEST_CASE("transcript: a new session's transcript is held while it is written",
          "[transcript_replay]") {
    TempDir dir;
    std::string path = (dir.path() / "sessions" / "s.jsonl").string();
    {
        Transcript transcript(path, {{"session_id", "s"}, {"cwd", "/ws"}, {"model", "m"}});
        transcript.record({{"type", "user"}, {"agent", "main"}, {"text", "hi"}});
        CHECK_FALSE(TranscriptLock::take(path));
        // A resumed session goes on with the same file and adds to it, header and all kept.
        ReplayedConversation r = read_transcript(path);
        CHECK(shown(r.conversation) == std::vector<std::string>{"user:hi"});
    }
    std::optional<TranscriptLock> lock = TranscriptLock::take(path);
    REQUIRE(lock);
    Transcript resumed(path);
    resumed.record({{"type", "user"}, {"agent", "main"}, {"text", "again"}});
    CHECK(shown(read_transcript(path).conversation) ==
          std::vector<std::string>{"user:hi", "user:again"});
    struct stat st;
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}
