#include "sandbox/nested_repositories.h"

#include <algorithm>
#include <deque>
#include <utility>

namespace caretz {

namespace {

class Scan {
public:
    Scan(SandboxPolicy& policy, const HostFs& fs, RepositoryScanLimits limits)
        : policy_(policy), fs_(fs), limits_(limits) {}

    bool run() {
        for (const auto& root : policy_.writable) {
            if (fs_.type(root) != HostFs::Type::directory) continue;
            std::deque<std::pair<std::string, int>> queue{{root, 0}};
            while (!queue.empty()) {
                auto [dir, depth] = queue.front();
                queue.pop_front();
                if (++listed_ > limits_.max_directories) return false;
                for (const auto& entry : fs_.list(dir)) {
                    const std::string path = dir == "/" ? "/" + entry.name : dir + "/" + entry.name;
                    // A checked-out submodule's `.git` is a file naming its git folder; pointed
                    // elsewhere, it would bring hooks of the sandbox's choosing.
                    if (entry.name == ".git" && entry.type == HostFs::Type::file && dir != root)
                        add(path);
                    if (entry.type != HostFs::Type::directory) continue;
                    if (entry.name == ".git") {
                        git_dir(path, dir != root);
                    } else if (depth + 1 <= limits_.max_depth) {
                        queue.emplace_back(path, depth + 1);
                    } else {
                        complete_ = false;
                    }
                }
            }
        }
        return complete_;
    }

private:
    // A git folder: its hooks and config unless it is the root's own (already protected),
    // then each submodule's git folder below `modules`, to any depth.
    void git_dir(const std::string& path, bool nested) {
        if (nested) protect(path);
        std::deque<std::string> modules{path + "/modules"};
        while (!modules.empty()) {
            std::string dir = modules.front();
            modules.pop_front();
            if (fs_.type(dir) != HostFs::Type::directory) continue;
            if (++listed_ > limits_.max_directories) {
                complete_ = false;
                return;
            }
            for (const auto& entry : fs_.list(dir)) {
                if (entry.type != HostFs::Type::directory) continue;
                const std::string module = dir + "/" + entry.name;
                // A submodule in a folder keeps its git folder at modules/a/b: a git folder has
                // HEAD; anything else is one more level of the submodule's path.
                if (fs_.type(module + "/HEAD") == HostFs::Type::file) {
                    protect(module);
                    modules.push_back(module + "/modules");
                } else {
                    modules.push_back(module);
                }
            }
        }
    }

    // Missing ones too: create_missing_git_paths makes them, so the sandbox cannot.
    void protect(const std::string& git_dir) {
        for (const char* sub : {"/hooks", "/config"}) add(git_dir + sub);
    }

    void add(const std::string& path) {
        auto& paths = policy_.protected_paths;
        if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
    }

    SandboxPolicy& policy_;
    const HostFs& fs_;
    RepositoryScanLimits limits_;
    size_t listed_ = 0;
    bool complete_ = true;
};

}  // namespace

bool protect_nested_repositories(SandboxPolicy& policy, const HostFs& fs,
                                 RepositoryScanLimits limits) {
    return Scan(policy, fs, limits).run();
}

}  // namespace caretz
