#include "sandbox/protection/missing_git_paths.h"

#include <algorithm>

#include "sandbox/path_names.h"

namespace caretz {

std::vector<std::string> create_missing_git_paths(SandboxPolicy& policy, const HostFs& fs,
                                                  const EmptyPathCreator& create) {
    std::vector<std::string> protected_whole;
    if (policy.read_only) return protected_whole;
    auto& paths = policy.protected_paths;
    // Indexes, not iterators: a git folder protected whole is appended to `paths`.
    for (size_t i = 0; i < paths.size(); ++i) {
        const std::string path = paths[i];
        const std::string name = name_of(path);
        if ((name != "hooks" && name != "config") || fs.type(path) != HostFs::Type::missing)
            continue;
        const std::string git_dir = parent_of(path);
        // A `.git` without HEAD is no repository; the sandbox keeps it empty and read-only.
        if (fs.type(git_dir) != HostFs::Type::directory ||
            fs.type(git_dir + "/HEAD") == HostFs::Type::missing)
            continue;
        if (create(path, name == "hooks" ? HostFs::Type::directory : HostFs::Type::file)) continue;
        if (std::find(paths.begin(), paths.end(), git_dir) == paths.end()) {
            paths.push_back(git_dir);
            protected_whole.push_back(git_dir);
        }
    }
    return protected_whole;
}

}  // namespace caretz
