#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/cache_layer.h"
#include "sandbox/environment.h"

namespace caretz {

// A folder of the shell's own (SandboxPolicy::private_dirs): a writable tmpfs over it, where
// the shell's own files are copied in and it may add more. Everything else there comes back
// read-only; what the shell runs from there is read-only even where it is missing (an empty
// folder then), so that nothing a command writes there runs in a later shell of the session,
// which would read the session's nonce before Caretz's hook does.
struct PrivateDir {
    std::string path;
    std::vector<std::string> own_files;  // names: fish_variables
    std::vector<std::string> run_from;   // names: config.fish, conf.d, functions, completions
};

// What the protection of what the host runs later (sandbox/protection/host_run_paths.h) did for
// one path of its table.
struct HostRunPath {
    enum class How {
        bound,         // it exists: bound read-only
        sealed,        // it is missing: nothing can be made at the top of `folder`
        opened,        // sandbox.writable names it: the user opened it
        left_missing,  // missing, and its program asks before running a new one
        inside,        // it lies in `folder`, which is read-only whole
        watched        // missing; the watch moves aside one a command makes
    };
    std::string path;
    std::string reason;
    How how;
    // The folder whose top is read-only (How::sealed), or the one read-only whole that holds
    // the path (How::inside).
    std::string folder;
};

// What the sandbox may see and touch. Paths are absolute and normalised.
struct SandboxPolicy {
    std::string home;
    std::string workspace;                     // writable; the cwd Caretz started in
    std::vector<std::string> writable;         // further writable roots (workspace included)
    std::vector<std::string> hidden;           // never mounted: they look missing inside
    std::vector<std::string> protected_paths;  // read-only even inside writable roots
    // Folders in writable roots whose top is read-only (resolved paths): what is in them stays
    // as writable as before, but nothing can be made, removed or renamed there. They keep a
    // hidden path from being made again, and a missing file the host runs later
    // (sandbox/protection/host_run_paths.h) from being made at all.
    std::vector<std::string> sealed;
    std::vector<HostRunPath> host_run;  // for `caretz sandbox show`
    std::map<std::string, std::string> env_overlay;
    std::vector<std::string> allowed_domains;  // destinations the proxy lets through
    std::vector<std::string> denied_domains;   // refused without asking; beat allowed ones
    // A machine policy's bound: destinations outside it are refused without asking.
    std::optional<std::vector<std::string>> domain_bound;
    bool allow_docker = false;
    std::string docker_socket;  // host path of the Docker socket
    bool read_only = false;     // plan mode: nothing is writable but /tmp
    // Folders where the shell keeps its own bookkeeping (fish's universal variables), each
    // private to the sandbox for its life, so the shell's writes neither fail into a command's
    // output nor reach the host.
    std::vector<PrivateDir> private_dirs;
    // The tools' caches, writable through a private layer (sandbox/cache_layer.h).
    CacheLayer cache_layer;

    // True when the sandbox may write path P (absolute, normalised) under this policy.
    bool can_write(const std::string& path) const;
    // True when P is one of the hidden paths or lies below one.
    bool is_hidden(const std::string& path) const;
};

// The inputs a policy is built from: settings after config, profile and flags are merged.
struct PolicySettings {
    std::vector<std::string> writable;
    std::vector<std::string> hidden;
    // Paths hidden by default that the user gives back (only ever from the user's own config).
    std::vector<std::string> visible;
    std::map<std::string, std::string> env;
    std::vector<std::string> allowed_domains;
    std::vector<std::string> denied_domains;
    std::optional<std::vector<std::string>> domain_bound;
    bool allow_docker = false;
    bool read_only = false;
    // The private cache layer (sandbox/cache_layer.h); false leaves the caches read-only.
    bool cache_layer = true;
};

// Builds the policy for a workspace: the default hidden paths
// (sandbox/protection/hidden_defaults.h) but the visible ones, the protected paths, plus the
// settings. `env` is the user's environment: it moves some default hidden paths ($XDG_CONFIG_HOME,
// $KUBECONFIG, ...) and names the Docker socket ($DOCKER_HOST).
SandboxPolicy make_policy(const PolicySettings& settings, const std::string& home,
                          const std::string& workspace, const Environment& env);

// Why no sandbox can start in `cwd` (absolute, normalised) under `policy`, as a sentence that
// names the fix: the folder lies in a hidden path, so it would not exist inside. nullopt when
// it can start there.
std::optional<std::string> hidden_cwd_problem(const SandboxPolicy& policy, const std::string& cwd);

// Lexically normalised absolute path: `~` and `~/x` expand to home, relative paths join base.
std::string absolute_path(const std::string& path, const std::string& base,
                          const std::string& home);

// True when `path` is `root` or lies below it (both normalised).
bool path_within(const std::string& path, const std::string& root);

}  // namespace caretz
