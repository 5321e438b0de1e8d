#include "sandbox/policy.h"

#include <algorithm>
#include <filesystem>

#include "sandbox/path_names.h"
#include "sandbox/protection/hidden_defaults.h"

namespace caretz {

namespace fs = std::filesystem;

std::string absolute_path(const std::string& path, const std::string& base,
                          const std::string& home) {
    fs::path p;
    if (path == "~") {
        p = home;
    } else if (path.starts_with("~/")) {
        p = fs::path(home) / path.substr(2);
    } else if (!path.empty() && path[0] == '/') {
        p = path;
    } else {
        p = fs::path(base) / path;
    }
    std::string out = p.lexically_normal().string();
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    return out;
}

bool path_within(const std::string& path, const std::string& root) {
    if (root == "/") return !path.empty() && path[0] == '/';
    return path == root || (path.starts_with(root) && path[root.size()] == '/');
}

bool SandboxPolicy::can_write(const std::string& path) const {
    if (path_within(path, "/tmp")) return true;  // the private /tmp
    if (read_only) return false;
    if (is_hidden(path)) return false;
    // What the sandbox writes in a cache folder lands in the private layer.
    for (const auto* folders : {&cache_layer.folders, &cache_layer.missing})
        for (const auto& folder : *folders)
            if (path_within(path, folder)) return true;
    for (const auto& p : protected_paths)
        if (path_within(path, p)) return false;
    if (path != "/" && std::find(sealed.begin(), sealed.end(), parent_view(path)) != sealed.end())
        return false;
    return std::any_of(writable.begin(), writable.end(),
                       [&](const std::string& root) { return path_within(path, root); });
}

bool SandboxPolicy::is_hidden(const std::string& path) const {
    return std::any_of(hidden.begin(), hidden.end(),
                       [&](const std::string& h) { return path_within(path, h); });
}

std::optional<std::string> hidden_cwd_problem(const SandboxPolicy& policy, const std::string& cwd) {
    for (const auto& h : policy.hidden) {
        if (!path_within(cwd, h)) continue;
        const std::string what = cwd == h ? cwd + ", is" : cwd + ", lies in " + h + ", which is";
        const std::string fix = "start Caretz in another folder, or, if " + h +
                                " is a credential store they may read, list it in "
                                "sandbox.visible in your config";
        return "the folder Caretz runs in, " + what +
               " hidden from sandboxed commands, so no sandbox can start there; " + fix;
    }
    return std::nullopt;
}

namespace {

void add_unique(std::vector<std::string>& list, const std::string& item) {
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

std::string docker_socket_path(const std::string& docker_host) {
    const std::string unix_prefix = "unix://";
    if (docker_host.starts_with(unix_prefix)) return docker_host.substr(unix_prefix.size());
    return "/var/run/docker.sock";
}

}  // namespace

SandboxPolicy make_policy(const PolicySettings& settings, const std::string& home,
                          const std::string& workspace, const Environment& env) {
    SandboxPolicy policy;
    policy.home = home;
    policy.workspace = absolute_path(workspace, "/", home);
    policy.read_only = settings.read_only;
    policy.env_overlay = settings.env;
    policy.allowed_domains = settings.allowed_domains;
    policy.denied_domains = settings.denied_domains;
    policy.domain_bound = settings.domain_bound;
    policy.allow_docker = settings.allow_docker;
    auto docker_host = env.find("DOCKER_HOST");
    policy.docker_socket = docker_socket_path(docker_host == env.end() ? "" : docker_host->second);

    add_unique(policy.writable, policy.workspace);
    for (const auto& w : settings.writable)
        add_unique(policy.writable, absolute_path(w, policy.workspace, home));

    std::vector<std::string> visible;
    for (const auto& v : settings.visible)
        visible.push_back(absolute_path(v, policy.workspace, home));
    for (const auto& h : default_hidden_paths(home, policy.workspace, env)) {
        const bool given_back =
            h.showable && std::find(visible.begin(), visible.end(), h.path) != visible.end();
        if (!given_back) add_unique(policy.hidden, h.path);
    }
    for (const auto& h : settings.hidden)
        add_unique(policy.hidden, absolute_path(h, policy.workspace, home));

    for (const auto& root : policy.writable)
        for (const char* sub : {".git/hooks", ".git/config", ".caretz"})
            add_unique(policy.protected_paths, absolute_path(sub, root, home));
    return policy;
}

}  // namespace caretz
