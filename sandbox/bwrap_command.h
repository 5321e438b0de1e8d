#pragma once

#include <string>
#include <vector>

#include "sandbox/host_fs.h"
#include "sandbox/policy.h"

namespace caretz {

// A tmpfs of the sandbox's own for Caretz's files inside (the session supervisor, its hooks,
// command files, job output). It is not under /tmp: when /tmp itself is a writable root, the
// sandbox's /tmp is the host's, and those files would land there, shared between users.
constexpr const char* kRuntimeDir = "/.caretz";

// Where bwrap reads the files it copies into the private folders (SandboxPolicy::private_dirs):
// the i-th copied file from descriptor kFirstCopiedFileFd + i.
constexpr int kFirstCopiedFileFd = 40;

// The bubblewrap arguments (without the leading "bwrap" and without "--" and the command)
// that give a process the view of the host `policy` describes, starting in `cwd`. The host
// files whose contents bwrap copies in are appended to `copied_files`, in descriptor order.
//
// Hidden paths are never mounted: every directory above a hidden path is rebuilt from a
// tmpfs with its other entries bound back in, then remounted read-only, so a hidden path
// looks missing and writes beside it fail instead of vanishing into a tmpfs.
std::vector<std::string> bwrap_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                         const std::string& cwd,
                                         std::vector<std::string>* copied_files = nullptr);

// Where sudo is found on the PATH of any usual system; each is watched (sudo_watch_arguments).
inline constexpr const char* kSudoLocations[] = {"/usr/bin/sudo",       "/bin/sudo",
                                                 "/usr/sbin/sudo",      "/sbin/sudo",
                                                 "/usr/local/bin/sudo", "/usr/local/sbin/sudo"};

// The bubblewrap arguments, to follow bwrap_arguments(), that let Caretz see sudo run inside
// the sandbox: every sudo of the host (kSudoLocations with symlinks resolved, hidden ones
// left out) is bound read-only at kRealSudoDir + its path, `stand_in` (Caretz's own binary) is
// bound read-only over it, and `records` (a host file Caretz reads) at kSudoRecordsPath.
std::vector<std::string> sudo_watch_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                              const std::string& stand_in,
                                              const std::string& records);

}  // namespace caretz
