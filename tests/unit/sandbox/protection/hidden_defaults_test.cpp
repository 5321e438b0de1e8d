#include "sandbox/protection/hidden_defaults.h"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace caretz;

namespace {

const std::string kHome = "/home/u";
const std::string kWorkspace = "/home/u/proj";

std::vector<DefaultHiddenPath> defaults(const Environment& env = {}) {
    return default_hidden_paths(kHome, kWorkspace, env);
}

const DefaultHiddenPath* find(const std::vector<DefaultHiddenPath>& list, const std::string& path) {
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const DefaultHiddenPath& d) { return d.path == path; });
    return it == list.end() ? nullptr : &*it;
}

bool hidden(const std::vector<DefaultHiddenPath>& list, const std::string& path) {
    return find(list, path) != nullptr;
}

bool showable(const std::vector<DefaultHiddenPath>& list, const std::string& path) {
    auto* d = find(list, path);
    return d && d->showable;
}

}  // namespace

TEST_CASE("every credential store an ops engineer keeps is hidden and may be given back") {
    auto list = defaults();
    for (const char* path :
         {"/home/u/.kube", "/home/u/.docker/config.json", "/home/u/.netrc",
          "/home/u/.git-credentials", "/home/u/.config/git/credentials",
          "/home/u/.config/gh/hosts.yml", "/home/u/.npmrc", "/home/u/.pypirc",
          "/home/u/.vault-token", "/home/u/.config/gcloud", "/home/u/.azure",
          "/home/u/.config/helm", "/home/u/.terraform.d/credentials.tfrc.json",
          "/home/u/.password-store", "/home/u/.local/share/keyrings", "/home/u/.mozilla",
          "/home/u/.config/google-chrome", "/home/u/.config/chromium"}) {
        INFO(path);
        CHECK(showable(list, path));
    }
}

TEST_CASE("sockets, ssh and gpg keys, AWS keys and Caretz's config and state stay hidden always") {
    auto list = defaults();
    for (const char* path : {"/run", "/home/u/.ssh", "/home/u/.gnupg", "/home/u/.aws",
                             "/home/u/.config/caretz", "/home/u/.local/state/caretz"}) {
        INFO(path);
        CHECK(hidden(list, path));
        CHECK_FALSE(showable(list, path));
    }
}

TEST_CASE("the folders a store sits in stay visible: only the store itself is hidden") {
    auto list = defaults();
    for (const char* path : {"/home/u", "/home/u/.docker", "/home/u/.config", "/home/u/.config/gh",
                             "/home/u/.terraform.d", "/home/u/.local/share"}) {
        INFO(path);
        CHECK_FALSE(hidden(list, path));
    }
}

TEST_CASE("XDG_CONFIG_HOME and XDG_DATA_HOME move the stores below them; both places are hidden") {
    auto list = defaults({{"XDG_CONFIG_HOME", "/home/u/cfg"},
                          {"XDG_DATA_HOME", "/data/u"},
                          {"XDG_STATE_HOME", "/data/u/state"}});
    for (const char* path :
         {"/home/u/cfg/gh/hosts.yml", "/home/u/cfg/helm", "/home/u/cfg/gcloud",
          "/home/u/cfg/google-chrome", "/home/u/cfg/chromium", "/home/u/cfg/git/credentials",
          "/data/u/keyrings", "/home/u/.config/gh/hosts.yml", "/home/u/.local/share/keyrings"}) {
        INFO(path);
        CHECK(showable(list, path));
    }
    CHECK(hidden(list, "/home/u/cfg/caretz"));
    CHECK_FALSE(showable(list, "/home/u/cfg/caretz"));
    CHECK(hidden(list, "/home/u/.config/caretz"));
    CHECK(hidden(list, "/home/u/.local/state/caretz"));
    CHECK(hidden(list, "/data/u/state/caretz"));
    // Home-based stores do not move.
    CHECK_FALSE(hidden(list, "/home/u/cfg/.kube"));
}

TEST_CASE("a relative XDG variable is ignored, as the XDG spec says") {
    auto list = defaults({{"XDG_CONFIG_HOME", "cfg"}});
    CHECK_FALSE(hidden(list, "/home/u/proj/cfg/gh/hosts.yml"));
    CHECK(hidden(list, "/home/u/.config/gh/hosts.yml"));
}

TEST_CASE("each file named in KUBECONFIG is hidden; relative ones resolve in the workspace") {
    auto list = defaults({{"KUBECONFIG", "/etc/kube/prod.yaml::~/clusters/dev.yaml:local.yaml:"}});
    CHECK(showable(list, "/etc/kube/prod.yaml"));
    CHECK(showable(list, "/home/u/clusters/dev.yaml"));
    CHECK(showable(list, "/home/u/proj/local.yaml"));
    CHECK(showable(list, "/home/u/.kube"));
    CHECK_FALSE(hidden(list, "/home/u/clusters"));
}

TEST_CASE("a KUBECONFIG file inside ~/.kube is not listed twice: ~/.kube covers it") {
    auto list = defaults({{"KUBECONFIG", "/home/u/.kube/config:/home/u/.kube/staging"}});
    CHECK(showable(list, "/home/u/.kube"));
    CHECK_FALSE(hidden(list, "/home/u/.kube/config"));
    CHECK_FALSE(hidden(list, "/home/u/.kube/staging"));
}

TEST_CASE("the variables tools use to move their stores are followed") {
    auto list = defaults({{"DOCKER_CONFIG", "/home/u/dock"},
                          {"GH_CONFIG_DIR", "/home/u/ghcfg"},
                          {"CLOUDSDK_CONFIG", "/srv/gcloud"},
                          {"AZURE_CONFIG_DIR", "~/az"},
                          {"HELM_CONFIG_HOME", "/home/u/helmcfg"},
                          {"PASSWORD_STORE_DIR", "/home/u/Sync/pass"}});
    for (const char* path :
         {"/home/u/dock/config.json", "/home/u/ghcfg/hosts.yml", "/srv/gcloud", "/home/u/az",
          "/home/u/helmcfg", "/home/u/Sync/pass", "/home/u/.docker/config.json"}) {
        INFO(path);
        CHECK(showable(list, path));
    }
    CHECK_FALSE(hidden(list, "/home/u/dock"));
    CHECK_FALSE(hidden(list, "/home/u/ghcfg"));
}

TEST_CASE("a store inside an always-hidden path can never be shown on its own") {
    auto list = defaults({{"KUBECONFIG", "/home/u/.ssh/kubeconfig"}});
    CHECK_FALSE(hidden(list, "/home/u/.ssh/kubeconfig"));
    CHECK(hidden(list, "/home/u/.ssh"));
}

TEST_CASE("an always-hidden path inside a showable one stays hidden on its own") {
    auto list = defaults({{"XDG_CONFIG_HOME", "/home/u/.azure/cfg"}});
    CHECK(showable(list, "/home/u/.azure"));
    REQUIRE(hidden(list, "/home/u/.azure/cfg/caretz"));
    CHECK_FALSE(showable(list, "/home/u/.azure/cfg/caretz"));
}

TEST_CASE("a path the same variable names twice is listed once") {
    auto list = defaults({{"XDG_CONFIG_HOME", "/home/u/.config"}, {"KUBECONFIG", "/k:/k"}});
    CHECK(std::count_if(list.begin(), list.end(), [](const DefaultHiddenPath& d) {
              return d.path == "/home/u/.config/gh/hosts.yml";
          }) == 1);
    CHECK(std::count_if(list.begin(), list.end(),
                        [](const DefaultHiddenPath& d) { return d.path == "/k"; }) == 1);
}

TEST_CASE("sandbox.visible may name a credential store and nothing else") {
    auto list = defaults();
    CHECK_FALSE(visible_problem("/home/u/.kube", list, kHome));
    CHECK_FALSE(visible_problem("/home/u/.docker/config.json", list, kHome));

    auto always = visible_problem("/home/u/.ssh", list, kHome);
    REQUIRE(always);
    CHECK(always->find("stays hidden always") != std::string::npos);

    auto part = visible_problem("/home/u/.kube/config", list, kHome);
    REQUIRE(part);
    CHECK(part->find("hidden as part of \"~/.kube\"") != std::string::npos);

    auto inside_always = visible_problem("/home/u/.ssh/config", list, kHome);
    REQUIRE(inside_always);
    CHECK(inside_always->find("lies in \"~/.ssh\", which stays hidden always") !=
          std::string::npos);

    auto unknown = visible_problem("/home/u/notes", list, kHome);
    REQUIRE(unknown);
    CHECK(unknown->find("not hidden by default") != std::string::npos);
    CHECK(visible_problem("/home/u/.docker", list, kHome));  // only its config.json is hidden
}

TEST_CASE("--help names each row with the variable that moves it") {
    const auto& table = hidden_by_default();
    std::vector<std::string> names;
    for (const auto& row : table) names.push_back(describe(row.where));
    auto has = [&](const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    CHECK(has("/run"));
    CHECK(has("~/.ssh"));
    CHECK(has("~/.config/caretz"));
    CHECK(has("~/.kube (and each file in $KUBECONFIG)"));
    CHECK(has("~/.docker/config.json (and $DOCKER_CONFIG/config.json)"));
    CHECK(has("~/.config/gcloud (and $CLOUDSDK_CONFIG)"));
    CHECK(has("~/.local/share/keyrings"));
}
