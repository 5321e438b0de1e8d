#include "escalation/credential_fallbacks.h"

#include <algorithm>

namespace caretz {

namespace {

// Where each tool keeps its credentials; sandbox/protection/hidden_defaults.cpp hides them (or the
// folders around them).
const HostLocation kKubeconfig = {Under::home, ".kube/config", "KUBECONFIG", "", true};
const HostLocation kHelmConfig = {Under::config_home, "helm", "HELM_CONFIG_HOME"};
const HostLocation kGhHosts = {Under::config_home, "gh/hosts.yml", "GH_CONFIG_DIR", "hosts.yml"};
const HostLocation kDockerConfig = {Under::home, ".docker/config.json", "DOCKER_CONFIG",
                                    "config.json"};
// git's credential store reads both files; curl, under git's https, reads ~/.netrc.
const std::vector<HostLocation> kGitStores = {{Under::home, ".git-credentials"},
                                              {Under::config_home, "git/credentials"},
                                              {Under::home, ".netrc"}};

}  // namespace

const std::vector<CredentialFallback>& credential_fallbacks() {
    // Each line is what the tool prints when the store is missing, not when it is wrong: a
    // kubeconfig whose server is down names that server, a git URL that does not exist says
    // "not found", gh without network says "error connecting".
    static const std::vector<CredentialFallback> table = {
        // Without a kubeconfig kubectl talks to the default server, which nothing serves
        // inside the sandbox; contexts it was told to use are unknown.
        {"kubectl", "The connection to the server localhost:8080 was refused", {kKubeconfig}},
        {"kubectl", "current-context is not set", {kKubeconfig}},
        {"kubectl", "context was not found for specified context", {kKubeconfig}},
        {"kubectl", "error: no context exists with the name", {kKubeconfig}},
        // helm reads the kubeconfig for the cluster and its own folder for repositories.
        {"helm", "Kubernetes cluster unreachable", {kKubeconfig}},
        {"helm", "Error: no repositories", {kHelmConfig}},
        // gh without hosts.yml: "To get started with GitHub CLI, please run:  gh auth login";
        // `gh auth status`: "... To log in, run: gh auth login"; in CI, the GH_TOKEN advice.
        {"gh", "gh auth login", {kGhHosts}},
        {"gh", "set the GH_TOKEN environment variable", {kGhHosts}},
        // git asks for what the credential store would have answered: on a terminal, or it
        // fails with "could not read Username for 'https://...'".
        {"git", "Username for '", kGitStores},
        {"git", "Password for '", kGitStores},
        // docker pulls and pushes anonymously without the auths of its config.
        {"docker", "may require 'docker login'", {kDockerConfig}},
        {"docker", "requested access to the resource is denied", {kDockerConfig}},
        {"docker", "unauthorized: authentication required", {kDockerConfig}},
        {"docker", "no basic auth credentials", {kDockerConfig}},
    };
    return table;
}

std::vector<std::string> programs_to_watch() {
    std::vector<std::string> programs = {"sudo"};
    for (const auto& row : credential_fallbacks())
        if (std::find(programs.begin(), programs.end(), row.program) == programs.end())
            programs.emplace_back(row.program);
    return programs;
}

}  // namespace caretz
