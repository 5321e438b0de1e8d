#pragma once

#include <string>
#include <vector>

namespace caretz {

// What a check of the writable roots found in a git repository or among the entries editors and
// tools run from (host_run_paths.h), and what Caretz did.
struct RepositoryFinding {
    enum class Kind {
        protected_repository,   // a repository made or changed in the sandbox, now protected
        hook_disabled,          // a hook the sandbox wrote, moved aside
        config_stripped,        // a config the sandbox wrote, cut to what a clone needs
        config_moved_aside,     // a config git could not read, moved aside
        redirect_moved_aside,   // a `commondir` naming a git folder the sandbox may write
        not_protected,          // hooks and config stay writable inside: checked again later
        folder_protected,       // a folder that could not be searched, read-only instead
        watch_limit,            // past the watch limits: `detail` folders without a watch
        run_entry_moved_aside,  // an editor's or tool's folder or config a command made
        run_entry_protected,    // one that came with a repository made in the sandbox
    };
    Kind kind;
    std::string path;
    std::string detail;  // what was left out, where a commondir pointed, or why it failed
    std::string aside;   // where the original now is
};

// The name of the kind for the audit log ("hook_disabled", ...).
const char* to_string(RepositoryFinding::Kind kind);
// One line for the user's screen.
std::string describe(const RepositoryFinding& finding);

// Renames `path` to a name no program reads, beside it; "" when it cannot.
std::string move_aside(const std::string& path);

// Moves aside what the sandbox wrote into the git folder `git_dir`, which it can no longer
// write: every hook but the samples, and whatever its config holds beyond what a clone needs
// (git_config_filter.h), the original saved beside it. What was done goes to `out`.
void neutralise_git_folder(const std::string& git_dir, std::vector<RepositoryFinding>& out);

}  // namespace caretz
