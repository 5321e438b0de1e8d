#pragma once

#include <string>
#include <variant>

#include "agent/transcript.h"
#include "agent/transcript_replay.h"
#include "app/command_line.h"

namespace caretz {

// The conversation --continue or --resume goes on with: rebuilt from its transcript, which
// this process holds for as long as this lives.
struct ResumedConversation {
    std::string transcript_path;
    ReplayedConversation replayed;
    TranscriptLock lock;
};

// Finds the conversation the command line names among those started in `cwd` (the latest for
// --continue; the id or its prefix for --resume ID; the user's choice from a numbered list for
// --resume on a terminal), rebuilds and takes it. Otherwise it says why on stderr (no
// conversation here, a damaged transcript, another Caretz writing it, --resume without a
// terminal to choose on: the list and how to name one) and gives Caretz's exit status.
std::variant<ResumedConversation, int> resume_conversation(const CommandLine& cl,
                                                           const std::string& sessions_dir,
                                                           const std::string& cwd);

}  // namespace caretz
