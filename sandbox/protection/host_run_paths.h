#pragma once

#include <string>
#include <vector>

#include "sandbox/environment.h"
#include "sandbox/host_fs.h"
#include "sandbox/policy.h"
#include "sandbox/protection/hidden_defaults.h"
#include "sandbox/protection/missing_git_paths.h"

namespace caretz {

// One row of the table of what the host runs later: a file or folder that a login, a shell, a
// desktop session, Python or an editor on the host reads and runs without asking. A sandboxed
// command that could write one would run code outside the sandbox the next time the user logs
// in or starts that program, so each stays read-only wherever it lies in a writable root,
// whether it exists yet or not.
struct HostRunEntry {
    HostLocation where;  // a folder is protected whole: everything in it is run or read
    const char* reason;  // what runs it, for `caretz sandbox show`
};

// The rows below the home (and the XDG folders), in the order `caretz sandbox show` lists them.
const std::vector<HostRunEntry>& host_run_by_default();

// One row of what runs from the top of a repository's work tree: editors and tools run these
// when the user opens the folder or commits there.
struct RepositoryRunEntry {
    const char* name;  // below the work tree
    bool folder;
    // A missing folder is made empty on the host, as a missing `.git/hooks` is (git lists no
    // empty folder, and an empty one holds no settings). A missing file is left out where the
    // program that reads it asks the user before it runs anything new (`reason` says which);
    // a hook manager's config is kept from being made instead (`seal_when_missing`).
    const char* reason;
    bool seal_when_missing = false;
};

// The rows every repository has, then those of the hook managers, which count only where the
// manager's hook is installed (hook_manager_entries()).
const std::vector<RepositoryRunEntry>& repository_run_entries();

// The configs of the hook managers whose hook `hook_texts` (the start of each installed hook,
// samples left out) shows: pre-commit and lefthook run what these name at the next `git commit`.
// husky needs no row: it works through core.hooksPath, which the git protection follows.
std::vector<RepositoryRunEntry> hook_manager_entries(const std::vector<std::string>& hook_texts);

// True when `path` (absolute, normalised) is one the table names for a user with this home, in
// its default place, or a repository's entry by its name.
bool names_host_run_path(const std::string& path, const std::string& home);

// Protects, in `policy`, everything of the table that lies in a writable root: existing paths
// become protected paths (bound read-only); for a missing one, the deepest folder above it that
// exists becomes sealed (SandboxPolicy::sealed: nothing can be made, removed or renamed at its
// top), except a missing folder at a work tree's top, which `create` makes empty first. The
// user's PATH folders in a writable root and the user's Python site folders count too. Also
// seals every folder of a writable root that holds a hidden path, as the sandbox rebuilds it.
// `work_trees` are the tops of the repositories found in the writable roots; `env` is the
// user's environment. Nothing is done for a read-only policy.
// What it did, path by path, goes to `policy.host_run`.
void protect_host_run_paths(SandboxPolicy& policy, const HostFs& fs, const Environment& env,
                            const std::vector<std::string>& work_trees,
                            const EmptyPathCreator& create);

// How `caretz sandbox show` and the notes name what happened to a path ("bound read-only", ...).
std::string describe(HostRunPath::How how);

}  // namespace caretz
