#pragma once

#include <string>
#include <string_view>

#include "agent/context_budget.h"
#include "escalation/command_pipeline.h"
#include "sandbox/sandbox.h"

namespace caretz {

// The first line of an approved rerun's result. It is the only place where the model learns
// that a command ran outside the sandbox; nothing else in any result mentions it.
inline constexpr std::string_view kRanOutsideNote =
    "[Caretz: this command ran OUTSIDE the sandbox, directly on the user's machine, after the "
    "user approved it. Its output reflects host access, not sandbox access.]";

// `output` in at most about `limit` bytes: its start and its end (two thirds of the room,
// where errors and summaries usually are), cut at line boundaries, with a line between them
// saying how many bytes were left out.
std::string bounded_output(const std::string& output, size_t limit);

// What the model reads for a command: a header written by Caretz (the note above first for an
// approved rerun; the exit status), then the output, bounded to `limit` bytes. A result after
// a denied offer is exactly the sandboxed one: refusals and the decision leave no trace.
// `interrupted`: the user stopped the command with Ctrl-C.
std::string command_result_text(const CommandOutcome& outcome, bool interrupted,
                                size_t limit = kResultOutputLimit);

// What the model reads for job_output: the job's state, then its output (rendered; head and
// tail with the number of bytes left out between them), bounded to `limit` bytes.
std::string job_report_text(int id, const JobReport& report, int columns,
                            size_t limit = kResultOutputLimit);

// The job's state in a few words: "running", "exited with status 0", "ended by signal 15".
std::string job_state_text(const JobReport& report);

}  // namespace caretz
