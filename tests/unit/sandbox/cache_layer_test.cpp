#include "sandbox/cache_layer.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sandbox/bwrap_command.h"
#include "sandbox/policy.h"
#include "tests/unit/sandbox/bwrap_args.h"
#include "tests/unit/sandbox/fake_host_fs.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;

namespace {

// A home with warm caches, and a workspace of its own.
FakeHostFs warm_home() {
    return FakeHostFs({{"/home", "d"},
                       {"/home/u", "d"},
                       {"/home/u/.cache", "d"},
                       {"/home/u/.cache/go-build", "d"},
                       {"/home/u/.cargo", "d"},
                       {"/home/u/.cargo/registry", "d"},
                       {"/home/u/.cargo/config.toml", "f"},
                       {"/home/u/.npm", "d"},
                       {"/home/u/.ssh", "d"},
                       {"/home/u/.local", "d"},
                       {"/home/u/.local/state", "d"},
                       {"/home/u/.local/state/caretz", "d"},
                       {"/home/u/work", "d"}});
}

SandboxPolicy policy_in(const std::string& workspace, const Environment& env = {}) {
    return make_policy({}, "/home/u", workspace, env);
}

const std::string kStore = "/home/u/.local/state/caretz/cache/work-0";

}  // namespace

TEST_CASE("The layer covers the caches the host has, each once", "[cache_layer]") {
    const FakeHostFs fs = warm_home();
    const CacheLayer layer = plan_cache_layer(policy_in("/home/u/work"), fs, {}, kStore, "");
    CHECK(layer.how == CacheLayer::How::overlay);
    // go-build lies in ~/.cache; ~/.cargo/git, ~/.m2 and ~/go are not there to lie over.
    CHECK(layer.folders ==
          std::vector<std::string>{"/home/u/.cache", "/home/u/.npm", "/home/u/.cargo/registry"});
    // Folders of the home the host does not have yet are made in the store, but not in a
    // folder the host has (~/.cargo): that one would have to be rebuilt on every start.
    CHECK(layer.missing == std::vector<std::string>{"/home/u/go/pkg/mod", "/home/u/.m2/repository",
                                                    "/home/u/.gradle/caches"});
    CHECK(layer.variables.empty());
    CHECK(layer.variables.count("XDG_CACHE_HOME") == 0);
}

TEST_CASE("The tools' own variables move the caches the layer covers", "[cache_layer]") {
    FakeHostFs fs(
        {{"/home/u", "d"}, {"/home/u/work", "d"}, {"/srv/gocache", "d"}, {"/srv/xdg", "d"}});
    const Environment env = {{"GOCACHE", "/srv/gocache"},
                             {"XDG_CACHE_HOME", "/srv/xdg"},
                             {"npm_config_cache", "relative/npm"}};
    const CacheLayer layer = plan_cache_layer(policy_in("/home/u/work", env), fs, env, kStore, "");
    CHECK(layer.folders == std::vector<std::string>{"/srv/xdg", "/srv/gocache"});
    // A relative value is no place a tool uses: the default one is, missing here.
    CHECK(std::find(layer.missing.begin(), layer.missing.end(), "/home/u/.npm") !=
          layer.missing.end());
    CHECK(layer.variables.empty());
}

TEST_CASE("A missing cache folder outside the home gets its tool's variable", "[cache_layer]") {
    FakeHostFs fs(
        {{"/home/u", "d"}, {"/home/u/work", "d"}, {"/srv", "d"}, {"/home/u/ln", "l:/srv"}});
    const Environment env = {{"GOCACHE", "/srv/gocache"}, {"PIP_CACHE_DIR", "/home/u/ln/pip"}};
    const CacheLayer layer = plan_cache_layer(policy_in("/home/u/work", env), fs, env, kStore, "");
    CHECK(layer.variables.at("GOCACHE") == "/.caretz/cache/go-build");
    CHECK(std::find(layer.missing.begin(), layer.missing.end(), "/srv/gocache") ==
          layer.missing.end());
    // Below a link: made where the link leads, which the sandbox may not rebuild.
    CHECK(layer.variables.at("PIP_CACHE_DIR") == "/.caretz/cache/pip");
    SandboxPolicy policy = policy_in("/home/u/work", env);
    policy.cache_layer = layer;
    const Args args = bwrap_arguments(policy, fs, "/home/u/work");
    CHECK(find_seq(args, {"--bind", kStore + "/own", "/.caretz/cache"}) >= 0);
    CHECK(find_seq(args, {"--setenv", "GOCACHE", "/.caretz/cache/go-build"}) >= 0);
}

TEST_CASE("Caches the sandbox writes already, or cannot see, are left alone", "[cache_layer]") {
    FakeHostFs fs({{"/home/u", "d"},
                   {"/home/u/work", "d"},
                   {"/home/u/work/.cache", "d"},
                   {"/home/u/.cache", "d"},
                   {"/home/u/.cache/secret", "d"}});
    // A workspace's own cache folder is writable as it is.
    const Environment env = {{"XDG_CACHE_HOME", "/home/u/work/.cache"}};
    CHECK(plan_cache_layer(policy_in("/home/u/work", env), fs, env, kStore, "").folders.empty());
    // A hidden path inside: the sandbox rebuilds that folder, so no overlay can lie over it.
    PolicySettings settings;
    settings.hidden = {"/home/u/.cache/secret"};
    const SandboxPolicy hiding = make_policy(settings, "/home/u", "/home/u/work", {});
    CHECK(plan_cache_layer(hiding, fs, {}, kStore, "").folders.empty());
    // Plan mode: nothing is writable but /tmp.
    PolicySettings plan;
    plan.read_only = true;
    const SandboxPolicy read_only = make_policy(plan, "/home/u", "/home/u/work", {});
    CHECK(plan_cache_layer(read_only, fs, {}, kStore, "").how == CacheLayer::How::none);
}

TEST_CASE("The home workspace gets the layer over its read-only dot entries", "[cache_layer]") {
    const FakeHostFs fs = warm_home();
    const SandboxPolicy policy = policy_in("/home/u");
    const CacheLayer layer = plan_cache_layer(policy, fs, {}, kStore, "");
    CHECK(std::find(layer.folders.begin(), layer.folders.end(), "/home/u/.cache") !=
          layer.folders.end());
}

TEST_CASE("Without an overlay the tools' variables point into the store", "[cache_layer]") {
    const FakeHostFs fs = warm_home();
    const CacheLayer layer =
        plan_cache_layer(policy_in("/home/u/work"), fs, {}, kStore, "Linux 5.10 cannot");
    CHECK(layer.how == CacheLayer::How::variables);
    CHECK(layer.folders.empty());
    CHECK(layer.variables.at("XDG_CACHE_HOME") == "/.caretz/cache/xdg");
    CHECK(layer.variables.at("GOCACHE") == "/.caretz/cache/go-build");
    CHECK(layer.variables.at("npm_config_cache") == "/.caretz/cache/npm");
    CHECK(layer.variables.at("CCACHE_DIR") == "/.caretz/cache/ccache");
    CHECK(cache_overlays(layer, "work.42.1").empty());
}

TEST_CASE("Cache folders cost bwrap no mount of their own: the overlays go over them later",
          "[cache_layer]") {
    const FakeHostFs fs = warm_home();
    SandboxPolicy policy = policy_in("/home/u");
    // The home's dot entries, read-only.
    policy.protected_paths.push_back("/home/u/.cache");
    policy.protected_paths.push_back("/home/u/.cargo");
    policy.cache_layer = plan_cache_layer(policy, fs, {}, kStore, "");
    const Args args = bwrap_arguments(policy, fs, "/home/u");
    // Read-only below the overlay, as the rest of the home's configuration is.
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/.cache", "/home/u/.cache"}) >= 0);
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/.cargo", "/home/u/.cargo"}) >= 0);
    for (const std::string folder : {"/home/u/.cache", "/home/u/.cargo/registry"}) {
        CHECK(find_seq(args, {"--bind", folder, folder}) < 0);
        CHECK(find_seq(args, {"--bind-try", folder, folder}) < 0);
    }
    CHECK(find_seq(args, {"--ro-bind", "/home/u/.cargo/registry", "/home/u/.cargo/registry"}) < 0);
    // Writable all the same, as the overlays make them.
    CHECK(policy.can_write("/home/u/.cache/go-build/ab/x-d"));
    CHECK(policy.can_write("/home/u/.cargo/registry/src/x/build.rs"));
    CHECK_FALSE(policy.can_write("/home/u/.cargo/config.toml"));
    // The store's own folder, where the link of the missing ~/go/pkg/mod leads.
    CHECK(find_seq(args, {"--bind", kStore + "/own", "/.caretz/cache"}) >= 0);
    CHECK(find_seq(args, {"--symlink", "/.caretz/cache/" + missing_cache_name("/home/u/go/pkg/mod"),
                          "/home/u/go/pkg/mod"}) >= 0);
}

TEST_CASE("A cache folder the host does not have is the store's, made in the sandbox",
          "[cache_layer]") {
    FakeHostFs fs({{"/home", "d"},
                   {"/home/u", "d"},
                   {"/home/u/.cargo", "d"},
                   {"/home/u/.cargo/config.toml", "f"},
                   {"/home/u/.local", "d"},
                   {"/home/u/.local/state", "d"},
                   {"/home/u/.local/state/caretz", "d"},
                   {"/home/u/work", "d"}});
    SandboxPolicy policy = policy_in("/home/u/work");
    policy.protected_paths.push_back("/home/u/.cargo");
    policy.cache_layer = plan_cache_layer(policy, fs, {}, kStore, "");
    const auto& missing = policy.cache_layer.missing;
    REQUIRE(std::find(missing.begin(), missing.end(), "/home/u/.cache") != missing.end());
    // What lies in ~/.cache comes with it: no variable moves go's build cache away.
    CHECK(policy.cache_layer.variables.empty());
    CHECK(policy.can_write("/home/u/.cache/newtool/x"));
    // In a folder the host has, which would have to be rebuilt: not made.
    CHECK_FALSE(policy.can_write("/home/u/.cargo/registry/src/x"));
    CHECK_FALSE(policy.can_write("/home/u/.cargo/config.toml"));
    const Args args = bwrap_arguments(policy, fs, "/home/u/work");
    // A link into the store's own folder, made in the rebuilt home before that is made
    // read-only.
    const long cache = find_seq(
        args,
        {"--symlink", "/.caretz/cache/" + missing_cache_name("/home/u/.cache"), "/home/u/.cache"});
    CHECK(cache >= 0);
    CHECK(cache < find_seq(args, {"--remount-ro", "/"}));
    CHECK(find_seq(args,
                   {"--symlink", "/.caretz/cache/" + missing_cache_name("/home/u/.m2/repository"),
                    "/home/u/.m2/repository"}) >= 0);
    CHECK(find_seq(args, {"--dir", "/home/u/.cargo"}) < 0);
    CHECK(find_seq(args, {"--bind", kStore + "/own", "/.caretz/cache"}) >= 0);
}

TEST_CASE("What sandboxes wrote while the host lacked a cache folder starts its upper folder",
          "[cache_layer]") {
    TempDir dir;
    const std::string made = (dir.path() / "store").string();
    CacheLayer layer;
    layer.how = CacheLayer::How::overlay;
    layer.store = made;
    layer.missing = {"/home/u/.cache"};
    REQUIRE(make_cache_store(layer).empty());
    const std::string own = made + "/own/" + missing_cache_name("/home/u/.cache");
    std::filesystem::create_directory(own + "/newtool");
    // The host made ~/.cache since.
    layer.missing.clear();
    layer.folders = {"/home/u/.cache"};
    REQUIRE(make_cache_store(layer).empty());
    CHECK(std::filesystem::exists(cache_upper_folder(layer, "/home/u/.cache") + "/newtool"));
    // Another Caretz of the workspace writes the store's upper folders: this one's own.
    layer.upper = "upper.42";
    const auto overlays = cache_overlays(layer, "work.42.1");
    REQUIRE(overlays.size() == 1);
    CHECK(overlays[0].upper == "upper.42");
}

TEST_CASE("One Caretz at a time writes a store's upper folders, none while it is cleared",
          "[cache_layer]") {
    TempDir dir;
    const std::string store = (dir.path() / "store").string();
    std::string problem;
    auto first = CacheStoreUse::take(store, problem);
    REQUIRE(first);
    CHECK(first->owns_upper());
    auto second = CacheStoreUse::take(store, problem);
    REQUIRE(second);
    CHECK_FALSE(second->owns_upper());
    std::filesystem::create_directories(store + "/x");
    CHECK_THAT(clear_cache_store(store), Catch::Matchers::Contains("is running"));
    CHECK(std::filesystem::exists(store + "/x"));
    first.reset();
    CHECK_FALSE(clear_cache_store(store).empty());
    second.reset();
    CHECK(clear_cache_store(store).empty());
    CHECK_FALSE(std::filesystem::exists(store));
    CHECK(CacheStoreUse::take(store, problem)->owns_upper());
}

TEST_CASE("Each overlay lies over its folder with a store folder of its own", "[cache_layer]") {
    CacheLayer layer;
    layer.how = CacheLayer::How::overlay;
    layer.store = kStore;
    layer.folders = {"/home/u/.cache", "/home/u/.npm"};
    const auto overlays = cache_overlays(layer, "work.42.1");
    REQUIRE(overlays.size() == 2);
    const std::string own = cache_store_folder(kStore, "/home/u/.cache");
    CHECK(overlays[0].target == "/home/u/.cache");
    // Made from the store folder, which names the upper and work folders.
    CHECK(overlays[0].folder == own);
    CHECK(overlays[0].upper == "upper");
    CHECK(overlays[0].work == "work.42.1");
    CHECK(own != cache_store_folder(kStore, "/home/u/.npm"));
    // One store per workspace.
    CHECK(cache_store("/s", "/home/u/a") != cache_store("/s", "/home/u/b"));
    CHECK(cache_store("/s", "/home/u/a") == cache_store("/s", "/home/u/a"));
}

TEST_CASE("A writable root that opens a cache is named", "[cache_layer]") {
    CHECK(cache_opened_by("/home/u/.cache", "/home/u", {}) == "/home/u/.cache");
    CHECK(cache_opened_by("/home/u/.cargo", "/home/u", {}) == "/home/u/.cargo/registry");
    CHECK(cache_opened_by("/home/u/.cache/pip", "/home/u", {}) == "/home/u/.cache");
    CHECK(cache_opened_by("/srv/data", "/home/u", {}).empty());
}

TEST_CASE("Work folders of ended processes are removed, live ones kept", "[cache_layer]") {
    TempDir dir;
    const std::string made = (dir.path() / "store").string();
    CacheLayer layer;
    layer.how = CacheLayer::How::overlay;
    layer.store = made;
    layer.folders = {"/home/u/.cache"};
    const pid_t ended = ::fork();
    if (ended == 0) ::_exit(0);
    ::waitpid(ended, nullptr, 0);
    REQUIRE(make_cache_store(layer).empty());
    // A work folder of its own for each mount.
    const auto mine = make_work_folders(layer, ::getpid());
    const auto next = make_work_folders(layer, ::getpid());
    const auto theirs = make_work_folders(layer, ended);
    const auto full = make_work_folders(layer, ended);
    REQUIRE((mine && next && theirs && full));
    CHECK(*mine != *next);
    // The first sandbox of the process that writes the upper folders takes the same one again.
    CHECK(make_work_folders(layer, ::getpid(), /*reused=*/true) == "work");
    CHECK(make_work_folders(layer, ::getpid(), /*reused=*/true) == "work");
    CacheLayer beside = layer;
    beside.upper = "upper.42";
    CHECK(make_work_folders(beside, ::getpid(), /*reused=*/true) != "work");
    const std::string own = cache_store_folder(layer.store, "/home/u/.cache");
    // The overlay leaves its work folder without permissions; one may still hold a file.
    for (const auto& work : {*theirs, *full})
        std::filesystem::create_directory(own + "/" + work + "/work");
    std::ofstream(own + "/" + *full + "/work/left");
    for (const auto& work : {*theirs, *full})
        std::filesystem::permissions(own + "/" + work + "/work", std::filesystem::perms::none);
    remove_stale_work_folders(layer);
    CHECK(std::filesystem::exists(own + "/" + *mine));
    CHECK(std::filesystem::exists(own + "/" + *next));
    CHECK_FALSE(std::filesystem::exists(own + "/" + *theirs));
    CHECK_FALSE(std::filesystem::exists(own + "/" + *full));
    CHECK(std::filesystem::exists(own + "/upper"));
    CHECK(std::filesystem::exists(own + "/work"));
    // An upper folder of its own goes with its process too.
    layer.upper = "upper." + std::to_string(ended);
    REQUIRE(make_cache_store(layer).empty());
    remove_stale_work_folders(layer);
    CHECK_FALSE(std::filesystem::exists(own + "/" + layer.upper));
    CHECK(clear_cache_store(made).empty());
    CHECK_FALSE(std::filesystem::exists(made));
}

TEST_CASE("The probe for user extended attributes leaves its mark only on Caretz's own folder",
          "[cache_layer]") {
    TempDir dir;
    const std::string own = (dir.path() / "caretz").string(),
                      other = (dir.path() / "home").string();
    std::filesystem::create_directories(own);
    std::filesystem::create_directories(other);
    const char* mark = "user.caretz.xattrs";
    CHECK(overlay_unavailable_reason(other, false).empty());
    CHECK(::getxattr(other.c_str(), mark, nullptr, 0) < 0);
    CHECK(overlay_unavailable_reason(own, true).empty());
    CHECK(::getxattr(own.c_str(), mark, nullptr, 0) >= 0);
    // Later starts read it.
    CHECK(overlay_unavailable_reason(own, true).empty());
}

TEST_CASE("The next Caretz to write the upper folders waits for the last one's sandbox to end",
          "[cache_layer]") {
    TempDir dir;
    const std::string store = (dir.path() / "store").string();
    auto noted_by_another = [&](pid_t bwrap) {
        std::ofstream(store + ".upper.lock") << "1 " << bwrap << " -1\n";
    };
    // A bwrap of an earlier Caretz, still ending.
    const pid_t ending = ::fork();
    if (ending == 0) {
        ::prctl(PR_SET_NAME, "bwrap");
        ::usleep(300 * 1000);
        ::_exit(0);
    }
    REQUIRE(ending > 0);
    ::usleep(50 * 1000);  // named by now
    noted_by_another(ending);
    wait_for_upper_writers(store, std::chrono::seconds(30));
    CHECK(::waitpid(ending, nullptr, WNOHANG) == ending);
    // Not waited for: a pid taken again by another program.
    const pid_t other = ::fork();
    if (other == 0) {
        ::usleep(30 * 1000 * 1000);
        ::_exit(0);
    }
    REQUIRE(other > 0);
    noted_by_another(other);
    wait_for_upper_writers(store, std::chrono::seconds(60));
    CHECK(::waitpid(other, nullptr, WNOHANG) == 0);
    ::kill(other, SIGKILL);
    ::waitpid(other, nullptr, 0);
}

TEST_CASE("The Caretz that writes the upper folders notes its sandbox, others do not",
          "[cache_layer]") {
    TempDir dir;
    const std::string store = (dir.path() / "store").string();
    std::string problem;
    auto first = CacheStoreUse::take(store, problem);
    auto second = CacheStoreUse::take(store, problem);
    REQUIRE((first && second));
    first->note_sandbox(1234, 5678);
    second->note_sandbox(1, 2);
    std::string owner, bwrap, inside;
    std::ifstream(store + ".upper.lock") >> owner >> bwrap >> inside;
    CHECK(owner == std::to_string(::getpid()));
    CHECK(bwrap == "1234");
    CHECK(inside == "5678");
}
