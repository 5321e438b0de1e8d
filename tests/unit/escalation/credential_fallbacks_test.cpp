#include "escalation/credential_fallbacks.h"

#include <catch2/catch.hpp>

#include "escalation/refusal_detector.h"
#include "fake_host.h"

using namespace caretz;
using caretz::testing::FakeHost;

namespace {

constexpr const char* kHome = "/home/cztest";

// Outputs of the real tools with their store missing, and with other failures; where the
// machine had the tool, captured from it (kubectl 1.32, git 2.39), else from the tool's source.
const std::string kKubectlFallback =
    "E1201 23:24:21.815932    4335 memcache.go:265] \"Unhandled Error\" err=\"couldn't get "
    "current server API group list: Get \\\"http://localhost:8080/api?timeout=32s\\\": dial tcp "
    "127.0.0.1:8080: connect: connection refused\"\n"
    "The connection to the server localhost:8080 was refused - did you specify the right host or "
    "port?\n";
const std::string kKubectlServerDown =
    "E1201 23:27:46.047275    9924 memcache.go:265] \"Unhandled Error\" err=\"couldn't get "
    "current server API group list: Get \\\"https://127.0.0.1:6443/api?timeout=32s\\\": dial tcp "
    "127.0.0.1:6443: connect: connection refused\"\n"
    "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or "
    "port?\n";
const std::string kGhFallback =
    "To get started with GitHub CLI, please run:  gh auth login\n"
    "Alternatively, populate the GH_TOKEN environment variable with a GitHub API authentication "
    "token.\n";
const std::string kGitFallback =
    "fatal: could not read Username for 'https://git.example.com': No such device or address\n";

struct Scene {
    SandboxPolicy policy = caretz::testing::test_policy();
    FakeHost host;
    Environment env;

    Scene() {
        host.paths = {"/home/cztest/.kube/config", "/home/cztest/.config/gh/hosts.yml",
                      "/home/cztest/.git-credentials", "/home/cztest/.docker/config.json",
                      "/home/cztest/.config/helm/repositories.yaml"};
    }

    std::vector<std::string> detect(const std::string& command, int exit_code,
                                    const std::string& output, std::vector<ProgramRun> runs) const {
        DetectionContext ctx{.command = command,
                             .exit_code = exit_code,
                             .cwd = "/home/cztest/work",
                             .policy = policy,
                             .host = host,
                             .program_runs = std::move(runs),
                             .env = env};
        std::vector<std::string> found;
        for (const auto& r : detect_refusals(ctx, output))
            found.push_back(std::string(to_string(r.kind)) + " " + r.subject + " | " + r.evidence);
        return found;
    }
};

ProgramRun ran(const std::string& program) {
    return {program, "/home/cztest/work", {program}};
}

using Found = std::vector<std::string>;

}  // namespace

TEST_CASE("each tool's fallback names the hidden store it went without", "[credential_fallbacks]") {
    struct Row {
        const char* program;
        std::string output;
        Found expected;
    };
    const std::vector<Row> rows = {
        {"kubectl",
         kKubectlFallback,
         {"hidden /home/cztest/.kube/config | The connection to the server localhost:8080 was "
          "refused - did you specify the right host or port?"}},
        {"kubectl",
         "error: current-context is not set\n",
         {"hidden /home/cztest/.kube/config | error: current-context is not set"}},
        {"kubectl",
         "Error in configuration: context was not found for specified context: prod\n",
         {"hidden /home/cztest/.kube/config | Error in configuration: context was not found for "
          "specified context: prod"}},
        {"kubectl",
         "error: no context exists with the name: \"prod\"\n",
         {"hidden /home/cztest/.kube/config | error: no context exists with the name: \"prod\""}},
        {"helm",
         "Error: Kubernetes cluster unreachable: Get \"http://localhost:8080/version\": dial tcp "
         "127.0.0.1:8080: connect: connection refused\n",
         {"hidden /home/cztest/.kube/config | Error: Kubernetes cluster unreachable: Get "
          "\"http://localhost:8080/version\": dial tcp 127.0.0.1:8080: connect: connection "
          "refused"}},
        {"helm",
         "Error: no repositories found. You must add one before updating\n",
         {"hidden /home/cztest/.config/helm | Error: no repositories found. You must add one "
          "before updating"}},
        {"gh",
         kGhFallback,
         {"hidden /home/cztest/.config/gh/hosts.yml | To get started with GitHub CLI, please "
          "run:  gh auth login"}},
        {"gh",
         "You are not logged into any GitHub hosts. To log in, run: gh auth login\n",
         {"hidden /home/cztest/.config/gh/hosts.yml | You are not logged into any GitHub hosts. "
          "To log in, run: gh auth login"}},
        {"gh",
         "gh: To use GitHub CLI in automation, set the GH_TOKEN environment variable.\n",
         {"hidden /home/cztest/.config/gh/hosts.yml | gh: To use GitHub CLI in automation, set "
          "the GH_TOKEN environment variable."}},
        {"git",
         kGitFallback,
         {"hidden /home/cztest/.git-credentials | fatal: could not read Username for "
          "'https://git.example.com': No such device or address"}},
        {"git",
         "fatal: could not read Username for 'http://127.0.0.1:36139': terminal prompts "
         "disabled\n",
         {"hidden /home/cztest/.git-credentials | fatal: could not read Username for "
          "'http://127.0.0.1:36139': terminal prompts disabled"}},
        {"git",
         "Password for 'https://ops@git.example.com': \n",
         {"hidden /home/cztest/.git-credentials | Password for 'https://ops@git.example.com':"}},
        {"docker",
         "Error response from daemon: pull access denied for registry.example.com/team/app, "
         "repository does not exist or may require 'docker login': denied: requested access to "
         "the resource is denied\n",
         {"hidden /home/cztest/.docker/config.json | Error response from daemon: pull access "
          "denied for registry.example.com/team/app, repository does not exist or may require "
          "'docker login': denied: requested access to the resource is denied"}},
        {"docker",
         "unauthorized: authentication required\n",
         {"hidden /home/cztest/.docker/config.json | unauthorized: authentication required"}},
        {"docker",
         "Error response from daemon: Head \"https://1.dkr.ecr.us-east-1.amazonaws.com/v2/app/"
         "manifests/1\": no basic auth credentials\n",
         {"hidden /home/cztest/.docker/config.json | Error response from daemon: Head "
          "\"https://1.dkr.ecr.us-east-1.amazonaws.com/v2/app/manifests/1\": no basic auth "
          "credentials"}},
    };
    const Scene scene;
    for (const auto& row : rows) {
        CAPTURE(row.program, row.output);
        CHECK(scene.detect(std::string(row.program) + " x", 1, row.output, {ran(row.program)}) ==
              row.expected);
    }
}

TEST_CASE("every program of the table is watched, sudo too", "[credential_fallbacks]") {
    CHECK(programs_to_watch() ==
          std::vector<std::string>{"sudo", "kubectl", "helm", "gh", "git", "docker"});
}

TEST_CASE("the store is found where the user's environment puts it", "[credential_fallbacks]") {
    Scene scene;
    scene.env = {{"KUBECONFIG", "/srv/k/prod.yaml:/srv/k/gone.yaml"},
                 {"XDG_CONFIG_HOME", "/home/cztest/xdg"}};
    scene.policy = make_policy({}, kHome, "/home/cztest/work", scene.env);
    scene.host.paths = {"/srv/k/prod.yaml", "/home/cztest/xdg/gh/hosts.yml"};
    // gone.yaml is not on the host; ~/.kube/config and ~/.config/gh/hosts.yml neither, here.
    CHECK(scene.detect("kubectl get pods", 1, kKubectlFallback, {ran("kubectl")}) ==
          Found{"hidden /srv/k/prod.yaml | The connection to the server localhost:8080 was "
                "refused - did you specify the right host or port?"});
    CHECK(scene.detect("gh pr list", 4, kGhFallback, {ran("gh")}) ==
          Found{"hidden /home/cztest/xdg/gh/hosts.yml | To get started with GitHub CLI, please "
                "run:  gh auth login"});
}

TEST_CASE("git names each of its stores that the host has", "[credential_fallbacks]") {
    Scene scene;
    scene.host.paths = {"/home/cztest/.netrc", "/home/cztest/.config/git/credentials"};
    const std::string line = kGitFallback.substr(0, kGitFallback.size() - 1);
    CHECK(scene.detect("git push", 128, kGitFallback, {ran("git")}) ==
          Found{"hidden /home/cztest/.config/git/credentials | " + line,
                "hidden /home/cztest/.netrc | " + line});
}

TEST_CASE("the same tools failing for other reasons are no refusal", "[credential_fallbacks]") {
    const Scene scene;
    // A kubeconfig the sandbox shows, whose server is down.
    CHECK(scene.detect("kubectl get pods", 1, kKubectlServerDown, {ran("kubectl")}).empty());
    CHECK(scene
              .detect("kubectl get pods", 1,
                      "Error from server (NotFound): namespaces \"prod\" not found\n",
                      {ran("kubectl")})
              .empty());
    // gh without network.
    CHECK(scene
              .detect("gh pr list", 1,
                      "error connecting to api.github.com\ncheck your internet connection or "
                      "https://githubstatus.com\n",
                      {ran("gh")})
              .empty());
    // git with a wrong URL, or a server that is down.
    CHECK(scene
              .detect("git ls-remote https://git.example.com/nothere", 128,
                      "fatal: repository 'https://git.example.com/nothere/' not found\n",
                      {ran("git")})
              .empty());
    CHECK(scene
              .detect("git push", 128,
                      "fatal: unable to access 'http://127.0.0.1:1/app.git/': Failed to connect "
                      "to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server\n",
                      {ran("git")})
              .empty());
    // docker with its config, refused for rights the account does not have.
    CHECK(scene
              .detect("docker pull x", 1,
                      "Error response from daemon: manifest for x:latest not found: manifest "
                      "unknown\n",
                      {ran("docker")})
              .empty());
}

TEST_CASE("a fallback line counts only when its own program ran and failed",
          "[credential_fallbacks]") {
    const Scene scene;
    // Printed without running the program: echo, cat of a log, a script that only prints.
    CHECK(scene.detect("cat kubectl.log; exit 1", 1, kKubectlFallback, {}).empty());
    CHECK(scene.detect("./pretend.sh", 1, kGhFallback, {}).empty());
    // Another watched program ran, but not the one whose line it is.
    CHECK(scene.detect("git log; cat k.log; exit 1", 1, kKubectlFallback, {ran("git")}).empty());
    // The program ran and the command succeeded.
    CHECK(scene.detect("kubectl get pods || true", 0, kKubectlFallback, {ran("kubectl")}).empty());
    // A sandbox that could not watch programs: the command text is no evidence.
    DetectionContext unwatched{
        .command = "kubectl get pods", .exit_code = 1, .policy = scene.policy, .host = scene.host};
    CHECK(detect_refusals(unwatched, kKubectlFallback).empty());
}

TEST_CASE("a store the host lacks, or the sandbox shows, is no refusal", "[credential_fallbacks]") {
    Scene missing;
    missing.host.paths = {};
    CHECK(missing.detect("kubectl get pods", 1, kKubectlFallback, {ran("kubectl")}).empty());

    Scene shown;
    PolicySettings settings;
    settings.visible = {"~/.kube", "~/.git-credentials"};
    shown.policy = make_policy(settings, kHome, "/home/cztest/work", {});
    CHECK(shown.detect("kubectl get pods", 1, kKubectlFallback, {ran("kubectl")}).empty());
    CHECK(shown.detect("git push", 128, kGitFallback, {ran("git")}).empty());
    // The others stay hidden, and still count.
    CHECK(shown.detect("gh pr list", 4, kGhFallback, {ran("gh")}).size() == 1);
}

TEST_CASE("a watched tool's run does not stand in for sudo", "[credential_fallbacks]") {
    const Scene scene;
    const std::string sudo_refusal =
        "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.\n";
    CHECK(scene.detect("./deploy.sh", 0, sudo_refusal, {ran("git")}).empty());
    CHECK(scene.detect("./deploy.sh", 0, sudo_refusal, {ran("git"), ran("sudo")}).size() == 1);
}
