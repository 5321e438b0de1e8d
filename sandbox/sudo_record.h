#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// One run of sudo inside the sandbox, as Caretz's stand-in for sudo saw it: the arguments it
// was given (argv[0] first) and the folder it was run in.
struct SudoRecord {
    std::string cwd;
    std::vector<std::string> argv;

    bool operator==(const SudoRecord&) const = default;
};

// Where the stand-in appends its records inside the sandbox, and where the real sudo binaries
// are bound read-only: the one the host has at P is at kRealSudoDir + P.
inline constexpr std::string_view kSudoRecordsPath = "/.caretz/sudo-records";
inline constexpr std::string_view kRealSudoDir = "/.caretz/real-sudo";

// Bounds that keep a record, and all of one command's records, small whatever sudo is given.
inline constexpr std::size_t kMaxSudoRecordField = 1024;  // bytes of the cwd or one argument
inline constexpr std::size_t kMaxSudoRecordArgs = 32;
inline constexpr std::size_t kMaxSudoRecordsBytes = 64 * 1024;

// One record as a line: "sudo N:cwd,N:arg0,N:arg1,...\n" with every field length-prefixed, so
// an argument holding a newline or a whole fake record stays inside its own field. Fields past
// the bounds are cut (a cut field ends with "..."); extra arguments are left off.
std::string encode_sudo_record(const SudoRecord& record);

// The well-formed records in `text`, in order. A record that does not parse (cut short, or
// written by something other than the stand-in) is skipped up to the next line that starts a
// record at a field boundary.
std::vector<SudoRecord> parse_sudo_records(std::string_view text);

// The record's command line as a shell would read it back: "sudo -n 'systemctl restart' x".
std::string sudo_command_line(const SudoRecord& record);

}  // namespace caretz
