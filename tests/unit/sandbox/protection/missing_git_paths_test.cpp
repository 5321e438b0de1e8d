#include "sandbox/protection/missing_git_paths.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <utility>

#include "tests/unit/sandbox/fake_host_fs.h"

using namespace caretz;

namespace {

// Records what would be created; `refused` names paths whose creation fails.
struct Creations {
    std::vector<std::pair<std::string, HostFs::Type>> made;
    std::vector<std::string> refused;

    EmptyPathCreator creator() {
        return [this](const std::string& path, HostFs::Type type) {
            if (std::find(refused.begin(), refused.end(), path) != refused.end()) return false;
            made.emplace_back(path, type);
            return true;
        };
    }
};

using Made = std::vector<std::pair<std::string, HostFs::Type>>;
constexpr auto kDir = HostFs::Type::directory;
constexpr auto kFile = HostFs::Type::file;

SandboxPolicy policy_for(const std::string& workspace, bool read_only = false) {
    PolicySettings settings;
    settings.read_only = read_only;
    return make_policy(settings, "/home/u", workspace, {});
}

bool is_protected(const SandboxPolicy& policy, const std::string& path) {
    const auto& p = policy.protected_paths;
    return std::find(p.begin(), p.end(), path) != p.end();
}

}  // namespace

TEST_CASE("a repository's missing hooks folder and config are created empty") {
    FakeHostFs host({{"/w", "d"}, {"/w/.git", "d"}, {"/w/.git/HEAD", "f"}});
    SandboxPolicy policy = policy_for("/w");
    Creations c;
    CHECK(create_missing_git_paths(policy, host, c.creator()).empty());
    CHECK(c.made == Made{{"/w/.git/hooks", kDir}, {"/w/.git/config", kFile}});
    CHECK_FALSE(is_protected(policy, "/w/.git"));
}

TEST_CASE("only what is missing from a git folder is created") {
    struct Case {
        const char* name;
        std::map<std::string, std::string> host;
        Made made;
    };
    const Case cases[] = {
        {"both there",
         {{"/w", "d"},
          {"/w/.git", "d"},
          {"/w/.git/HEAD", "f"},
          {"/w/.git/hooks", "d"},
          {"/w/.git/config", "f"}},
         {}},
        {"config there",
         {{"/w", "d"}, {"/w/.git", "d"}, {"/w/.git/HEAD", "f"}, {"/w/.git/config", "f"}},
         {{"/w/.git/hooks", kDir}}},
        // A symlink is there: it is bound as it is, never replaced.
        {"hooks a symlink",
         {{"/w", "d"},
          {"/w/.git", "d"},
          {"/w/.git/HEAD", "f"},
          {"/w/.git/hooks", "l:/x"},
          {"/w/.git/config", "f"}},
         {}},
        // No repository: the sandbox gets an empty read-only .git (bwrap_arguments).
        {"no .git", {{"/w", "d"}}, {}},
        {"a .git without HEAD", {{"/w", "d"}, {"/w/.git", "d"}}, {}},
        // A worktree's or submodule's gitfile: the git folder it names is elsewhere.
        {"a gitfile", {{"/w", "d"}, {"/w/.git", "f"}}, {}},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        FakeHostFs host(c.host);
        SandboxPolicy policy = policy_for("/w");
        Creations made;
        CHECK(create_missing_git_paths(policy, host, made.creator()).empty());
        CHECK(made.made == c.made);
    }
}

TEST_CASE("nested clones and submodules get their missing hooks and config too") {
    FakeHostFs host({{"/w", "d"},
                     {"/w/.git", "d"},
                     {"/w/.git/HEAD", "f"},
                     {"/w/.git/hooks", "d"},
                     {"/w/.git/config", "f"},
                     {"/w/.git/modules", "d"},
                     {"/w/.git/modules/lib", "d"},
                     {"/w/.git/modules/lib/HEAD", "f"},
                     {"/w/.git/modules/lib/config", "f"},
                     {"/w/lib", "d"},
                     {"/w/lib/.git", "f"},
                     {"/w/src", "d"},
                     {"/w/src/clone", "d"},
                     {"/w/src/clone/.git", "d"},
                     {"/w/src/clone/.git/HEAD", "f"}});
    SandboxPolicy policy = policy_for("/w");
    // What RepositoryWatch adds for the git folders it finds below the root.
    for (const char* path : {"/w/.git/modules/lib/hooks", "/w/.git/modules/lib/config",
                             "/w/lib/.git", "/w/src/clone/.git/hooks", "/w/src/clone/.git/config"})
        policy.protected_paths.push_back(path);
    Creations c;
    CHECK(create_missing_git_paths(policy, host, c.creator()).empty());
    std::sort(c.made.begin(), c.made.end());
    CHECK(c.made == Made{{"/w/.git/modules/lib/hooks", kDir},
                         {"/w/src/clone/.git/config", kFile},
                         {"/w/src/clone/.git/hooks", kDir}});
}

TEST_CASE("a git folder whose hooks or config cannot be created is protected whole") {
    FakeHostFs host({{"/w", "d"}, {"/w/.git", "d"}, {"/w/.git/HEAD", "f"}});
    SandboxPolicy policy = policy_for("/w");
    Creations c;
    c.refused = {"/w/.git/hooks", "/w/.git/config"};
    CHECK(create_missing_git_paths(policy, host, c.creator()) ==
          std::vector<std::string>{"/w/.git"});
    CHECK(is_protected(policy, "/w/.git"));
    CHECK(std::count(policy.protected_paths.begin(), policy.protected_paths.end(), "/w/.git") == 1);
}

TEST_CASE("nothing is created for a read-only sandbox, nor for Caretz's own .caretz") {
    FakeHostFs host({{"/w", "d"}, {"/w/.git", "d"}, {"/w/.git/HEAD", "f"}});
    SandboxPolicy plan = policy_for("/w", true);
    Creations c;
    CHECK(create_missing_git_paths(plan, host, c.creator()).empty());
    CHECK(c.made.empty());
    SandboxPolicy policy = policy_for("/w");
    create_missing_git_paths(policy, host, c.creator());
    CHECK(std::none_of(c.made.begin(), c.made.end(),
                       [](const auto& m) { return m.first.ends_with(".caretz"); }));
}
