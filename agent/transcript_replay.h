#pragma once

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/conversation.h"

namespace caretz {

// A transcript that cannot be rebuilt into a conversation: a line that is not JSON, or an
// entry of a known type with a wrong shape. The message names the file and the line, and
// nothing of the transcript is used.
class TranscriptDamaged : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The main agent's conversation as a transcript leaves it (rollout replay, as Codex resumes).
struct ReplayedConversation {
    std::string session_id;  // the header's: the transcript's name
    std::string cwd;         // the workspace it was started in
    std::string model;       // the model in force at the end: the header's or a later switch's
    Conversation conversation;
    // Tool calls that had no result when the session ended (the connection dropped while a
    // command ran); each is closed with kInterruptedByEnd.
    int interrupted_calls = 0;
};

// The result given to a tool call the session ended during: the model must not take it for
// a command that never ran, nor for one that finished.
inline constexpr const char* kInterruptedByEnd =
    "error: interrupted: the Caretz session ended while this ran (for instance the connection "
    "dropped), so its result is unknown; it may have run in part";

// Rebuilds the conversation from a transcript's lines: the header, then the entries of the
// agent "main" (subagents' entries and `!` commands are not part of it). "compaction" replaces
// the conversation so far, "clear" empties it, "model" changes the model; unknown types are
// skipped, so that older Caretz versions read what newer ones add. `name` is the file, for
// TranscriptDamaged.
ReplayedConversation replay_transcript(std::istream& lines, const std::string& name);
// The same for the file at `path`; TranscriptDamaged also when it cannot be read.
ReplayedConversation read_transcript(const std::string& path);

// A conversation kept in the sessions folder, as --resume lists it.
struct SavedConversation {
    std::string session_id;
    std::string path;
    std::string cwd;
    std::string started;             // the header's time, as written (UTC, ISO 8601)
    std::int64_t last_write_ns = 0;  // the file's modification time, in ns since the epoch
    std::uintmax_t bytes = 0;        // the transcript's size
    std::string first_prompt;        // the main agent's first user text; empty when there is none
};

// The conversations in `sessions_dir` started in the folder `cwd`, the latest written first.
// Files whose header cannot be read are left out: they are no conversation to continue.
std::vector<SavedConversation> saved_conversations(const std::string& sessions_dir,
                                                   const std::string& cwd);
// The one whose session id is `id` or starts with it; throws std::invalid_argument saying why
// there is none or more than one.
const SavedConversation& find_conversation(const std::vector<SavedConversation>& list,
                                           const std::string& id);

}  // namespace caretz
