#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sandbox/environment.h"
#include "sandbox/host_fs.h"
#include "sandbox/policy.h"
#include "sandbox/protection/hidden_defaults.h"

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

// One row of what runs from a repository's folders: editors, AI tools and hook managers run
// these when the user opens the folder, starts the tool or commits there, and most keep their
// trust per path, so a changed file under a trusted path runs without a question.
struct RepositoryRunEntry {
    const char* name;  // the entry's name, or its folder's and its own ("a/b")
    bool folder;
    const char* reason;
    // Its program asks the user before it runs a new or changed one (`reason` says how): a
    // missing one is left to be made, and one a command makes is left where it is.
    bool asks_first = false;
    // A hook manager's config, whose absence must stay so: the deepest folder above it is
    // sealed (no footprint: the sandbox rebuilds that folder).
    bool seal_when_missing = false;
};

// The rows every repository has, then those of the hook managers, which count only where the
// manager's hook is installed (hook_manager_entries()). Each counts at every depth of a
// writable root: an existing one is bound read-only wherever a search finds it; a missing one
// is never made on the host (an empty folder there would be the protection's footprint), and
// one a command makes is moved aside by the watch (RepositoryWatch) unless `asks_first`.
const std::vector<RepositoryRunEntry>& repository_run_entries();

// The row the entry `name`, listed in a folder named `folder`, stands for; null for none.
const RepositoryRunEntry* repository_run_entry(std::string_view folder, std::string_view name);

// What the user told tools to run without asking, which makes rows of the table that would ask
// first count like the others: direnv's whitelist (direnv.toml's [whitelist] prefix and exact:
// an `.envrc` there loads unasked) and Claude Code's enableAllProjectMcpServers (every
// `.mcp.json`'s servers start unasked).
struct ToolTrust {
    std::vector<std::string> direnv_prefix;  // as written, or expanded from "~/"
    std::vector<std::string> direnv_exact;   // `.envrc` (or `.env`) paths
    bool all_project_mcp = false;

    // From the user's own configs: direnv's where direnv finds it for the environment `env`
    // ($DIRENV_CONFIG, else $XDG_CONFIG_HOME/direnv, else ~/.config/direnv; direnv.toml there,
    // else config.toml), ~/.claude/settings.json and ~/.claude.json.
    static ToolTrust of_user(const HostFs& fs, const std::string& home, const Environment& env);
    // Whether the program of `entry`, at `path`, asks before it runs a new or changed one.
    bool asks_first(const RepositoryRunEntry& entry, const std::string& path) const;
};

// The files the `.envrc` text `text`, in folder `dir`, has direnv load or watch besides itself
// (source_env, source_env_if_exists, dotenv and dotenv_if_exists, `.env` by default, source,
// `.`, watch_file), as absolute paths; arguments with variables or commands in them are left
// out. direnv's approval covers only the `.envrc` itself: what it sources runs unasked once
// it changes.
std::vector<std::string> envrc_sources(const std::string& dir, const std::string& text);

// The configs of the hook managers whose hook `hook_texts` (the start of each installed hook,
// samples left out) shows: pre-commit and lefthook run what these name at the next `git commit`.
// husky needs no row: it works through core.hooksPath, which the git protection follows.
std::vector<RepositoryRunEntry> hook_manager_entries(const std::vector<std::string>& hook_texts);

// True when sandbox.writable naming `path` (absolute, normalised) would open what the host runs
// later for a user with this home: a path the table names (in its default place, or a
// repository's entry by its name) or one in it, or an entry of the home's configuration
// (protect_home_configuration()) or a path in one.
bool opens_host_run_path(const std::string& path, const std::string& home);

// The home's configuration is not the workspace. When a writable root is the home or holds it,
// every entry of the home whose name starts with a dot is read-only whole, whether or not the
// table names it (a tool's folder holds plugins, startup scripts and init files no list keeps up
// with), and the home's top is sealed, so no new one can be made there (the sandbox rebuilds
// that top anyway wherever a credential store there must look missing). The user's own entries
// stay writable. sandbox.writable naming one entry exactly opens it. Runs before the search for
// repositories and protect_host_run_paths(), which leave alone what lies in these entries.
// Hidden entries are left to the sandbox, which does not show them at all.
void protect_home_configuration(SandboxPolicy& policy, const HostFs& fs);

// Why protect_home_configuration() makes an entry read-only, for `caretz sandbox show`.
extern const char* const kHomeConfigurationReason;

// Protects, in `policy`, everything of the table that lies in a writable root: existing paths
// become protected paths (bound read-only); for a missing one, the deepest folder above it that
// exists becomes sealed (SandboxPolicy::sealed: nothing can be made, removed or renamed at its
// top). A repository's entries (`run_entries`, found at every depth by the search, and those a
// work tree's top would hold) are never made on the host: a missing one is the watch's. The
// user's PATH folders in a writable root and the user's Python site folders count too. Also
// seals every folder of a writable root that holds a hidden path, as the sandbox rebuilds it.
// What an existing `.envrc` sources counts too (envrc_sources()), and `trust` says which rows
// count though their program would ask. `work_trees` are the tops of the repositories found in
// the writable roots; `env` is the user's environment. Nothing is done for a read-only policy. What
// it did, path by path, goes to `policy.host_run`, after the rows protect_home_configuration() put
// there.
void protect_host_run_paths(SandboxPolicy& policy, const HostFs& fs, const Environment& env,
                            const std::vector<std::string>& work_trees,
                            const std::vector<std::string>& run_entries,
                            const ToolTrust& trust = {});

// How `caretz sandbox show` and the notes name what happened to a path ("bound read-only", ...).
std::string describe(HostRunPath::How how);

}  // namespace caretz
