#pragma once

#include <cstddef>
#include <string>

#include "agent/conversation.h"

namespace caretz {

// The pieces of compacting a conversation that outgrows the model's context window (Codex
// keeps the same job apart, in codex-rs/core's compact). Pure: the summary itself is the
// model's, asked by the caller.
//
// 1. Old command outputs go first: a tool result keeps Caretz's header (where the command ran,
//    its exit status) and the output's last line, and says how much was left out; the command
//    stays in the call that asked for it.
// 2. If that is not enough, the older messages are summarized by the model and the latest
//    ones stay as they were.
// A summary is text for the model and nothing else: it never carries an allowance, and no
// part of Caretz reads it back.

// The size a conversation is measured by: its texts, its calls' names and arguments, plus a
// little per message for the format around them; `fixed` adds the system prompt and tools.
size_t conversation_bytes(const Conversation& conversation, size_t fixed = 0);

// A tool result cut down to its header and a note; unchanged if it is short or already cut.
std::string shrunk_result(const std::string& result);

// Shrinks tool results, oldest first, leaving the newest `keep_newest` whole, until the
// conversation is at most `target` bytes (with `fixed`). Returns how many were shrunk.
int shrink_old_results(Conversation& conversation, size_t keep_newest, size_t target, size_t fixed);

// Where the part kept verbatim starts: the longest tail of at most `tail_bytes` that starts
// with the user's or the model's message (never with a tool result, which must follow its
// call). At least the last such message stays, however large.
size_t verbatim_tail_start(const Conversation& conversation, size_t tail_bytes);

// What the model is asked to summarize: `older` as plain text, one entry a message, at most
// `max_bytes` (the middle goes first, since the start holds the user's goal and the end the
// latest state).
std::string summary_source(const Conversation& older, size_t max_bytes);

// The instruction for the summary: what to keep, and `also_keep` (what the user asked for
// with /compact WHAT).
std::string summary_instruction(const std::string& also_keep);

// What Caretz writes itself when the model could not summarize: the user's requests and the
// commands with their exit status, newest last, at most `max_bytes`.
std::string plain_summary(const Conversation& older, size_t max_bytes);

// The conversation after compaction: one user message holding the summary (and the user's
// latest request verbatim, when it was among the summarized messages), then
// conversation[tail_start..].
Conversation compacted(const Conversation& conversation, size_t tail_start,
                       const std::string& summary, bool written_by_model);

}  // namespace caretz
