#pragma once

#include <string>
#include <vector>

#include "sandbox/host_fs.h"
#include "sandbox/policy.h"

namespace caretz {

// A tmpfs of the sandbox's own for Caretz's files inside (the session supervisor, command
// files, job output). It is not under /tmp: when /tmp itself is a writable root, the
// sandbox's /tmp is the host's, and those files would land there, shared between users.
constexpr const char* kRuntimeDir = "/.caretz";

// The session shell's hook files (hooks/shell_launch.h): a folder of the sandbox's root, made
// read-only with it, so no command can change or move what a later shell of the session reads.
// (In the writable kRuntimeDir it would need a tmpfs of its own, remounted read-only: one more
// pass of bwrap over the mount table.)
constexpr const char* kHookDir = "/.caretz-hooks";

// Where bwrap reads the files it copies into the private folders (SandboxPolicy::private_dirs):
// the i-th copied file from descriptor kFirstCopiedFileFd + i.
constexpr int kFirstCopiedFileFd = 40;

// The bubblewrap arguments (without the leading "bwrap" and without "--" and the command)
// that give a process the view of the host `policy` describes, starting in `cwd`. The host
// files whose contents bwrap copies in are appended to `copied_files`, in descriptor order.
// `in_root` are bwrap options that make folders and files in the new root (kHookDir's), put
// after everything else the root holds and before the root is remounted read-only.
//
// Hidden paths are never mounted: every directory above a hidden path is rebuilt as an empty
// folder (a tmpfs of its own, or a folder of the rebuilt one around it) with its other entries
// bound back in, then made read-only, so a hidden path looks missing and writes beside it fail
// instead of vanishing into a tmpfs.
std::vector<std::string> bwrap_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                         const std::string& cwd,
                                         std::vector<std::string>* copied_files = nullptr,
                                         const std::vector<std::string>& in_root = {});

// Where programs are found on the PATH of any usual system; a watched program is looked for
// there as well as in the user's $PATH.
inline constexpr const char* kSystemProgramDirs[] = {
    "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};

// The programs a sandbox watches (stand_in.h), by the name each is run by, and the folders,
// besides kSystemProgramDirs, it looks for them in (the absolute folders of the user's $PATH).
struct WatchedPrograms {
    std::vector<std::string> names;
    std::vector<std::string> search_dirs;
};

// The absolute folders a $PATH value names, in order.
std::vector<std::string> path_folders(const std::string& path_variable);

// The bubblewrap arguments, to follow bwrap_arguments(), that let Caretz see the watched
// programs run inside the sandbox: each one the host has in a folder searched (symlinks
// resolved; hidden ones, and ones the sandbox may write, left out) is bound read-only at
// kRealProgramsDir/NAME + its path, `stand_in` (caretz-inside) is bound read-only over
// it, and `records` (a host file Caretz reads) at kRunRecordsPath.
std::vector<std::string> run_watch_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                             const WatchedPrograms& programs,
                                             const std::string& stand_in,
                                             const std::string& records);

}  // namespace caretz
