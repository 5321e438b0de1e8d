#include "sandbox/nested_repositories.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "fake_host_fs.h"

using namespace caretz;

namespace {

bool is_protected(const SandboxPolicy& policy, const std::string& path) {
    const auto& p = policy.protected_paths;
    return std::find(p.begin(), p.end(), path) != p.end();
}

SandboxPolicy workspace_policy() {
    SandboxPolicy policy;
    policy.workspace = "/w";
    policy.writable = {"/w"};
    return policy;
}

}  // namespace

TEST_CASE("hooks and config of nested clones and submodules are protected") {
    FakeHostFs host({{"/w", "d"},
                     {"/w/.git", "d"},
                     {"/w/.git/hooks", "d"},
                     {"/w/.git/config", "f"},
                     {"/w/.git/modules", "d"},
                     {"/w/.git/modules/lib", "d"},
                     {"/w/.git/modules/lib/HEAD", "f"},
                     {"/w/.git/modules/lib/hooks", "d"},
                     {"/w/.git/modules/lib/config", "f"},
                     {"/w/.git/modules/lib/modules", "d"},
                     {"/w/.git/modules/lib/modules/inner", "d"},
                     {"/w/.git/modules/lib/modules/inner/HEAD", "f"},
                     {"/w/.git/modules/lib/modules/inner/config", "f"},
                     {"/w/.git/modules/vendor", "d"},
                     {"/w/.git/modules/vendor/tool", "d"},
                     {"/w/.git/modules/vendor/tool/HEAD", "f"},
                     {"/w/.git/modules/vendor/tool/hooks", "d"},
                     {"/w/lib", "d"},
                     {"/w/lib/.git", "f"},
                     {"/w/src", "d"},
                     {"/w/src/clone", "d"},
                     {"/w/src/clone/.git", "d"},
                     {"/w/src/clone/.git/hooks", "d"},
                     {"/w/src/clone/.git/config", "f"}});
    SandboxPolicy policy = workspace_policy();
    CHECK(protect_nested_repositories(policy, host));
    for (const char* path :
         {"/w/src/clone/.git/hooks", "/w/src/clone/.git/config", "/w/.git/modules/lib/hooks",
          "/w/.git/modules/lib/config", "/w/.git/modules/lib/modules/inner/config",
          "/w/.git/modules/vendor/tool/hooks", "/w/lib/.git"})
        CHECK(is_protected(policy, path));
    // The root's own repository is make_policy's. Missing hooks are listed too, for
    // create_missing_git_paths to make before the sandbox could.
    CHECK_FALSE(is_protected(policy, "/w/.git/hooks"));
    CHECK(is_protected(policy, "/w/.git/modules/lib/modules/inner/hooks"));
}

TEST_CASE("symlinks are not followed out of the writable root") {
    FakeHostFs host({{"/w", "d"},
                     {"/w/link", "l:/elsewhere"},
                     {"/elsewhere", "d"},
                     {"/elsewhere/.git", "d"},
                     {"/elsewhere/.git/hooks", "d"}});
    SandboxPolicy policy = workspace_policy();
    CHECK(protect_nested_repositories(policy, host));
    CHECK(policy.protected_paths.empty());
}

TEST_CASE("the search stops at its limits and says so") {
    FakeHostFs host({{"/w", "d"},
                     {"/w/a", "d"},
                     {"/w/a/b", "d"},
                     {"/w/a/b/.git", "d"},
                     {"/w/a/b/.git/hooks", "d"}});
    SandboxPolicy deep = workspace_policy();
    CHECK_FALSE(protect_nested_repositories(deep, host, {1, 100}));
    CHECK_FALSE(is_protected(deep, "/w/a/b/.git/hooks"));
    SandboxPolicy wide = workspace_policy();
    CHECK_FALSE(protect_nested_repositories(wide, host, {6, 2}));
    SandboxPolicy enough = workspace_policy();
    CHECK(protect_nested_repositories(enough, host, {6, 100}));
    CHECK(is_protected(enough, "/w/a/b/.git/hooks"));
}
