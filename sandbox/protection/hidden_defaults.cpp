#include "sandbox/protection/hidden_defaults.h"

#include <algorithm>
#include <sstream>

#include "sandbox/policy.h"

namespace caretz {

const std::vector<HiddenByDefault>& hidden_by_default() {
    // ~/.kube is hidden whole, not just its config: people keep several kubeconfigs there, and
    // kubelogin and the cloud plugins cache tokens in ~/.kube/cache. ~/.docker keeps its
    // contexts and buildx state visible, gh its preferences and aliases: only the file with
    // the credentials is hidden there.
    static const std::vector<HiddenByDefault> table = {
        {{Under::root, "/run"}, false},
        {{Under::home, ".ssh"}, false},
        {{Under::home, ".gnupg"}, false},
        {{Under::home, ".aws"}, false},
        {{Under::config_home, "caretz"}, false},
        // The audit log and transcripts: after a Deny, nothing may tell the model that an
        // offer existed.
        {{Under::state_home, "caretz"}, false},
        {{Under::home, ".kube", "KUBECONFIG", "", true}, true},
        {{Under::home, ".docker/config.json", "DOCKER_CONFIG", "config.json"}, true},
        {{Under::home, ".netrc"}, true},
        {{Under::home, ".git-credentials"}, true},
        {{Under::config_home, "git/credentials"}, true},  // git's credential store reads both
        {{Under::config_home, "gh/hosts.yml", "GH_CONFIG_DIR", "hosts.yml"}, true},
        {{Under::home, ".npmrc"}, true},
        {{Under::home, ".pypirc"}, true},
        {{Under::home, ".vault-token"}, true},
        {{Under::config_home, "gcloud", "CLOUDSDK_CONFIG"}, true},
        {{Under::home, ".azure", "AZURE_CONFIG_DIR"}, true},
        {{Under::config_home, "helm", "HELM_CONFIG_HOME"}, true},
        {{Under::home, ".terraform.d/credentials.tfrc.json"}, true},
        {{Under::home, ".password-store", "PASSWORD_STORE_DIR"}, true},
        {{Under::data_home, "keyrings"}, true},
        {{Under::home, ".mozilla"}, true},
        {{Under::config_home, "google-chrome"}, true},
        {{Under::config_home, "chromium"}, true},
    };
    return table;
}

namespace {

// The folders `under` stands for: the default one, and the one the XDG variable names when
// it is an absolute path (the XDG spec ignores relative ones).
std::vector<std::string> bases(Under under, const std::string& home, const Environment& env) {
    auto with_xdg = [&](const char* name, const char* fallback) {
        std::vector<std::string> out = {home + fallback};
        std::string xdg = variable_in(env, name);
        if (xdg.starts_with('/')) out.push_back(xdg);
        return out;
    };
    switch (under) {
        case Under::root:
            return {"/"};
        case Under::home:
            return {home};
        case Under::config_home:
            return with_xdg("XDG_CONFIG_HOME", "/.config");
        case Under::data_home:
            return with_xdg("XDG_DATA_HOME", "/.local/share");
        case Under::state_home:
            return with_xdg("XDG_STATE_HOME", "/.local/state");
    }
    return {};
}

std::vector<std::string> split_list(const std::string& value) {
    std::vector<std::string> out;
    std::stringstream in(value);
    std::string item;
    while (std::getline(in, item, ':'))
        if (!item.empty()) out.push_back(item);
    return out;
}

void add(std::vector<DefaultHiddenPath>& out, const std::string& path, bool showable) {
    for (auto& existing : out) {
        if (existing.path == path) {
            existing.showable = existing.showable && showable;
            return;
        }
    }
    out.push_back({path, showable});
}

// True when `inner` is inside `outer` and `outer` hides it at least as firmly.
bool covered_by(const DefaultHiddenPath& inner, const DefaultHiddenPath& outer) {
    return inner.path != outer.path && path_within(inner.path, outer.path) &&
           (inner.showable || !outer.showable);
}

std::string shortened(const std::string& path, const std::string& home) {
    if (!home.empty() && home != "/" && path_within(path, home))
        return "~" + path.substr(home.size());
    return path;
}

}  // namespace

std::vector<std::string> location_paths(const HostLocation& location, const std::string& home,
                                        const std::string& workspace, const Environment& env) {
    std::vector<std::string> paths;
    for (const auto& base : bases(location.under, home, env))
        paths.push_back(absolute_path(location.path, base, home));
    if (!location.variable) return paths;
    const std::string value = variable_in(env, location.variable);
    std::vector<std::string> named =
        location.variable_lists_paths
            ? split_list(value)
            : (value.empty() ? std::vector<std::string>{} : std::vector<std::string>{value});
    for (const auto& path : named) {
        std::string absolute = absolute_path(path, workspace, home);
        if (*location.below_variable)
            absolute = absolute_path(location.below_variable, absolute, home);
        paths.push_back(std::move(absolute));
    }
    return paths;
}

std::vector<DefaultHiddenPath> default_hidden_paths(const std::string& home,
                                                    const std::string& workspace,
                                                    const Environment& env) {
    std::vector<DefaultHiddenPath> all;
    for (const auto& row : hidden_by_default())
        for (const auto& path : location_paths(row.where, home, workspace, env))
            add(all, path, row.showable);
    std::vector<DefaultHiddenPath> out;
    for (const auto& entry : all) {
        bool covered = std::any_of(all.begin(), all.end(), [&](const DefaultHiddenPath& other) {
            return covered_by(entry, other);
        });
        if (!covered) out.push_back(entry);
    }
    return out;
}

std::optional<std::string> visible_problem(const std::string& path,
                                           const std::vector<DefaultHiddenPath>& defaults,
                                           const std::string& home) {
    for (const auto& entry : defaults) {
        if (entry.path != path) continue;
        if (entry.showable) return std::nullopt;
        return "which stays hidden always; sandbox.visible can give back only the credential "
               "stores that caretz --help lists";
    }
    for (const auto& entry : defaults) {
        if (!path_within(path, entry.path)) continue;
        const std::string outer = shortened(entry.path, home);
        if (entry.showable)
            return "which is hidden as part of \"" + outer + "\"; name \"" + outer +
                   "\" to make it visible";
        return "which lies in \"" + outer + "\", which stays hidden always";
    }
    return "which is not hidden by default (caretz --help lists what is)";
}

std::string describe(const HostLocation& row) {
    std::string out;
    switch (row.under) {
        case Under::root:
            out = row.path;
            break;
        case Under::home:
            out = std::string("~/") + row.path;
            break;
        case Under::config_home:
            out = std::string("~/.config/") + row.path;
            break;
        case Under::data_home:
            out = std::string("~/.local/share/") + row.path;
            break;
        case Under::state_home:
            out = std::string("~/.local/state/") + row.path;
            break;
    }
    if (!row.variable) return out;
    const std::string var = std::string("$") + row.variable;
    if (row.variable_lists_paths) return out + " (and each file in " + var + ")";
    return out + " (and " + var +
           (*row.below_variable ? "/" + std::string(row.below_variable) : "") + ")";
}

}  // namespace caretz
