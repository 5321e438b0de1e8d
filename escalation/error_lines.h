#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// Readers for the error messages real tools print, one rendered output line at a time. They
// say what a line reports; whether that is the sandbox's doing is RefusalDetector's question.

enum class ErrorCode { erofs, eacces, eperm, ebusy, enoent };

struct PathError {
    ErrorCode code;
    std::vector<std::string> paths;  // as printed, the most likely subject first
    // The line says the tool was making the path ("cannot create regular file 'P'", "Saving key
    // "P" failed", git's "cannot mkdir P"), so an ENOENT means the folder to hold it was
    // missing, not the path itself.
    bool creating = false;
};

// The path error a line reports, in the formats of coreutils, bash/dash/zsh/fish, sed, git,
// Python, Node, Go and Rust tools: "touch: cannot touch '/etc/x': Read-only file system",
// "zsh:1: read-only file system: /etc/x", "OSError: [Errno 30] Read-only file system: '/etc/x'",
// "Error: EROFS: read-only file system, open '/etc/x'", "sh: 1: cd: can't cd to /x", ... .
// `previous` is the line before, for fish, which names the path on the line above the error.
// Lines where the text is about something other than a path, such as ssh's "Permission denied
// (publickey)" or "socket: Operation not permitted", report none.
std::optional<PathError> parse_path_error(std::string_view line, std::string_view previous = {});

// An error a line reports without the path beside its errno (DESIGN.md section 5, shapes
// beyond "P: errno"): the errno's words alone, or on a chained line ("Caused by:", cargo's
// "Read-only file system (os error 30)", perl's die "$!" with " at -e line 1."), or a tool's
// own words for a failed write ("Failure writing output to destination", "unable to open
// database"). `paths` holds the paths the line names in quotes (often none): the subject is
// then found on a line above (quoted_paths) or in the command line.
std::optional<PathError> parse_pathless_error(std::string_view line);

// The paths a line names in quotes or backticks ("failed to create directory `P`"), for a
// chained error whose errno comes a few lines below.
std::vector<std::string> quoted_paths(std::string_view line);

// The Unix socket of a Docker daemon the line says is unreachable ("" when the message names
// none), or nullopt when it says no such thing or the daemon is reached over the network.
std::optional<std::string> parse_docker_unreachable(std::string_view line);

// A D-Bus bus a line says is unreachable: the system bus, the user's session bus, or either
// (the message does not say, as systemctl's "Failed to connect to bus: ..."; the command
// does), and its socket ("" when the message names none).
struct UnreachableBus {
    enum class Which { system, session, either };
    Which which;
    std::string socket;
};
std::optional<UnreachableBus> parse_bus_unreachable(std::string_view line);

enum class SudoEvidence {
    none,
    // "sudo: /etc/sudo.conf is owned by uid 65534, should be 0": root's files are not root's,
    // as inside a user namespace.
    foreign_owner,
    // "no new privileges", "effective uid is not 0", "must be owned by uid 0 and have the
    // setuid bit set": sudo could not become root at all.
    cannot_become_root,
};

// Whether the line is sudo's own report that it could not work in this environment. A refused
// password or a missing terminal is no such report.
SudoEvidence parse_sudo_refusal(std::string_view line);

}  // namespace caretz
