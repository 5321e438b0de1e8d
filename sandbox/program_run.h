#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// One run of a watched program (sudo, kubectl, git, ...) inside the sandbox, as Caretz's
// stand-in for it saw it: which program, the arguments it was given (argv[0] first) and the
// folder it was run in.
struct ProgramRun {
    std::string program;  // the name it is watched by ("sudo", "kubectl"), not a path
    std::string cwd;
    std::vector<std::string> argv;

    bool operator==(const ProgramRun&) const = default;
};

// Where the stand-in appends its records inside the sandbox, and where the real programs are
// bound read-only: the one the host has at P, watched as NAME, is at kRealProgramsDir/NAME/P.
inline constexpr std::string_view kRunRecordsPath = "/.caretz/runs";
inline constexpr std::string_view kRealProgramsDir = "/.caretz/real";

// Bounds that keep a record, and all of one command's records, small whatever a program is
// given.
inline constexpr std::size_t kMaxRunRecordField = 1024;  // bytes of the cwd or one argument
inline constexpr std::size_t kMaxRunRecordArgs = 32;
inline constexpr std::size_t kMaxRunRecordsBytes = 64 * 1024;

// One record as a line: "run N:program,N:cwd,N:arg0,N:arg1,...\n" with every field
// length-prefixed, so an argument holding a newline or a whole fake record stays inside its own
// field. Fields past the bounds are cut (a cut field ends with "..."); extra arguments are left
// off.
std::string encode_program_run(const ProgramRun& run);

// The well-formed records in `text`, in order. A record that does not parse (cut short, or
// written by something other than the stand-in) is skipped up to the next line that starts a
// record at a field boundary.
std::vector<ProgramRun> parse_program_runs(std::string_view text);

// The run's command line as a shell would read it back: "sudo -n 'systemctl restart' x".
std::string run_command_line(const ProgramRun& run);

}  // namespace caretz
