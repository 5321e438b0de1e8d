#pragma once

#include <cstddef>

#include "sandbox/host_fs.h"
#include "sandbox/policy.h"

namespace caretz {

// How far the search for repositories below a writable root goes.
struct RepositoryScanLimits {
    int max_depth = 6;               // folders below the root
    size_t max_directories = 20000;  // folders listed, over all roots
};

// Adds the hooks and config of every git repository found below the policy's writable roots
// to its protected paths: nested clones (`sub/.git`) and submodules (`.git/modules/NAME`,
// however deep). Git runs hooks, and commands named in config, on the host the next time the
// user runs git there, so these must not be writable from inside; those missing on the host
// are listed too, for create_missing_git_paths. The root's own `.git` is protected already
// (make_policy). The search does not follow symlinks and stops at
// `limits`; repositories beyond them, or made while the sandbox runs, are not covered.
// Returns false when a limit cut the search short.
bool protect_nested_repositories(SandboxPolicy& policy, const HostFs& fs,
                                 RepositoryScanLimits limits = {});

}  // namespace caretz
