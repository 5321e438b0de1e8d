#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sandbox/host_fs.h"
#include "sandbox/policy.h"

namespace caretz {

// Creates `path` empty on the host as a folder or a file (`type`); false when it cannot.
using EmptyPathCreator = std::function<bool(const std::string& path, HostFs::Type type)>;

// Git runs the hooks in a git folder's `hooks` and obeys its `config` the next time the user
// runs git on the host, so the sandbox binds both read-only (make_policy, and
// RepositoryWatch for nested clones, submodules and worktrees). A path that does not exist
// cannot be bound, and then the sandbox could create it: a repository cloned with
// --template=, or whose samples the user deleted, would take hooks from inside. So each
// protected hooks folder or config file that is missing from a git folder (one with a HEAD) is
// created empty on the host before the sandbox starts, and is bound like any other: an empty
// hooks folder runs nothing, and git reads an empty config as its defaults. Where that fails,
// the whole git folder is protected instead. Nothing is created for a read-only policy (plan
// mode), where the sandbox can write nothing anyway. Returns the git folders protected whole.
std::vector<std::string> create_missing_git_paths(SandboxPolicy& policy, const HostFs& fs,
                                                  const EmptyPathCreator& create);

}  // namespace caretz
