#include "sandbox/policy.h"

#include <catch2/catch.hpp>

using namespace caretz;

TEST_CASE("absolute_path expands ~ and resolves relative paths lexically") {
    CHECK(absolute_path("~", "/w", "/home/u") == "/home/u");
    CHECK(absolute_path("~/.ssh", "/w", "/home/u") == "/home/u/.ssh");
    CHECK(absolute_path("sub/../x", "/w", "/home/u") == "/w/x");
    CHECK(absolute_path("/etc//passwd/", "/w", "/home/u") == "/etc/passwd");
    CHECK(absolute_path("../..", "/w", "/home/u") == "/");
}

TEST_CASE("path_within matches whole components only") {
    CHECK(path_within("/home/u/x", "/home/u"));
    CHECK(path_within("/home/u", "/home/u"));
    CHECK_FALSE(path_within("/home/user", "/home/u"));
    CHECK(path_within("/etc", "/"));
}

TEST_CASE("the default policy hides secrets and protects git hooks inside the workspace") {
    PolicySettings settings;
    settings.hidden = {"secrets", "~/.kube"};
    settings.writable = {"~/cache"};
    auto p = make_policy(settings, "/home/u", "/home/u/proj", {});
    CHECK(p.is_hidden("/run/docker.sock"));
    CHECK(p.is_hidden("/home/u/.ssh/id_ed25519"));
    CHECK(p.is_hidden("/home/u/.gnupg"));
    CHECK(p.is_hidden("/home/u/.aws/credentials"));
    CHECK(p.is_hidden("/home/u/.config/caretz/config.json"));
    CHECK(p.is_hidden("/home/u/proj/secrets/key"));
    CHECK(p.is_hidden("/home/u/.kube/config"));
    CHECK_FALSE(p.is_hidden("/home/u/.sshx"));

    CHECK(p.can_write("/home/u/proj/src/main.c"));
    CHECK(p.can_write("/home/u/cache/x"));
    CHECK(p.can_write("/tmp/x"));
    CHECK_FALSE(p.can_write("/etc/passwd"));
    CHECK_FALSE(p.can_write("/home/u/.bashrc"));
    CHECK_FALSE(p.can_write("/home/u/proj/.git/hooks/pre-commit"));
    CHECK_FALSE(p.can_write("/home/u/proj/.git/config"));
    CHECK_FALSE(p.can_write("/home/u/proj/.caretz/x"));
    CHECK(p.can_write("/home/u/proj/.git/objects/ab"));
    CHECK_FALSE(p.can_write("/home/u/proj/secrets/key"));
}

TEST_CASE("plan mode makes nothing writable but the private /tmp") {
    PolicySettings settings;
    settings.read_only = true;
    auto p = make_policy(settings, "/home/u", "/home/u/proj", {});
    CHECK_FALSE(p.can_write("/home/u/proj/x"));
    CHECK(p.can_write("/tmp/x"));
}

TEST_CASE("the docker socket comes from DOCKER_HOST or the default path") {
    PolicySettings settings;
    CHECK(make_policy(settings, "/h", "/w", {}).docker_socket == "/var/run/docker.sock");
    CHECK(make_policy(settings, "/h", "/w", {{"DOCKER_HOST", "unix:///h/.docker/d.sock"}})
              .docker_socket == "/h/.docker/d.sock");
}

TEST_CASE("the credential stores are hidden by default, below home and where XDG moves them") {
    Environment env = {{"XDG_CONFIG_HOME", "/home/u/cfg"}, {"KUBECONFIG", "/etc/kube/prod"}};
    auto p = make_policy({}, "/home/u", "/home/u/proj", env);
    CHECK(p.is_hidden("/home/u/.kube/config"));
    CHECK(p.is_hidden("/etc/kube/prod"));
    CHECK(p.is_hidden("/home/u/.docker/config.json"));
    CHECK_FALSE(p.is_hidden("/home/u/.docker/contexts"));
    CHECK(p.is_hidden("/home/u/cfg/gh/hosts.yml"));
    CHECK(p.is_hidden("/home/u/.config/gh/hosts.yml"));
    CHECK(p.is_hidden("/home/u/cfg/caretz/config.json"));
    CHECK(p.is_hidden("/home/u/.config/caretz/config.json"));
    CHECK_FALSE(p.is_hidden("/home/u/cfg/gh/config.yml"));
}

TEST_CASE("sandbox.visible gives back a credential store, never what stays hidden always") {
    PolicySettings settings;
    settings.visible = {"~/.kube", "/home/u/.netrc", "~/.ssh", "~/.config/caretz", "/run"};
    auto p = make_policy(settings, "/home/u", "/home/u/proj", {});
    CHECK_FALSE(p.is_hidden("/home/u/.kube/config"));
    CHECK_FALSE(p.is_hidden("/home/u/.netrc"));
    CHECK(p.is_hidden("/home/u/.pypirc"));
    CHECK(p.is_hidden("/home/u/.docker/config.json"));
    CHECK(p.is_hidden("/home/u/.ssh/id_ed25519"));
    CHECK(p.is_hidden("/home/u/.config/caretz"));
    CHECK(p.is_hidden("/run/user/1000"));
}

TEST_CASE("sandbox.hidden beats sandbox.visible") {
    PolicySettings settings;
    settings.visible = {"~/.kube"};
    settings.hidden = {"~/.kube"};
    auto p = make_policy(settings, "/home/u", "/home/u/proj", {});
    CHECK(p.is_hidden("/home/u/.kube/config"));
}

TEST_CASE("giving back ~/.kube gives back the KUBECONFIG files inside it") {
    PolicySettings settings;
    settings.visible = {"~/.kube"};
    auto p = make_policy(settings, "/home/u", "/home/u/proj",
                         {{"KUBECONFIG", "/home/u/.kube/config:/home/u/other.yaml"}});
    CHECK_FALSE(p.is_hidden("/home/u/.kube/config"));
    CHECK(p.is_hidden("/home/u/other.yaml"));
}

TEST_CASE("a sandbox cannot start in a folder the policy hides, and says how to fix it") {
    auto p = make_policy({}, "/home/u", "/home/u/.kube", {});
    auto problem = hidden_cwd_problem(p, "/home/u/.kube");
    REQUIRE(problem);
    CHECK(problem->find("/home/u/.kube") != std::string::npos);
    CHECK(problem->find("sandbox.visible") != std::string::npos);
    CHECK(hidden_cwd_problem(p, "/home/u/.ssh/keys"));
    CHECK_FALSE(hidden_cwd_problem(p, "/home/u/proj"));
    CHECK_FALSE(hidden_cwd_problem(p, "/home/u"));

    PolicySettings settings;
    settings.visible = {"~/.kube"};
    CHECK_FALSE(
        hidden_cwd_problem(make_policy(settings, "/home/u", "/home/u/.kube", {}), "/home/u/.kube"));
}
