// --continue rebuilds a conversation from a transcript file, which a crash, a full disk or a
// hand edit may have left in any state. Whatever the file: the replay gives a conversation or
// says the transcript is damaged (TranscriptDamaged, naming a line), never a crash or any
// other exception; and the conversation it gives is one both APIs accept: every call of a
// reply has exactly one result before the next message, and every result answers such a call.

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "agent/transcript_replay.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

namespace {

void check_pairs(const Conversation& conversation) {
    std::vector<std::string> unanswered;
    for (const Message& m : conversation) {
        if (m.role == Message::Role::tool) {
            auto it = std::find(unanswered.begin(), unanswered.end(), m.tool_call_id);
            require(it != unanswered.end(), "a result answers no call of the reply before it");
            unanswered.erase(it);
            continue;
        }
        require(unanswered.empty(), "a call has no result before the next message");
        require(m.role == Message::Role::assistant || m.tool_calls.empty(),
                "a message other than the model's carries tool calls");
        for (const ToolCall& call : m.tool_calls) unanswered.push_back(call.id);
    }
    require(unanswered.empty(), "a call has no result at the end");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
    try {
        ReplayedConversation replayed = replay_transcript(lines, "fuzz.jsonl");
        check_pairs(replayed.conversation);
    } catch (const TranscriptDamaged& e) {
        require(std::string(e.what()).find("fuzz.jsonl is damaged at line ") != std::string::npos,
                "a damaged transcript's message names no line");
    }
    return 0;
}
