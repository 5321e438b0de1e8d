#include "sandbox/protection/host_run_paths.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/unit/sandbox/fake_host_fs.h"

using namespace caretz;

namespace {

// A user's home on a Debian host: Debian's three startup files, a project with a repository,
// and the folders the table's missing paths would go in.
std::map<std::string, std::string> debian_home() {
    return {{"/home", "d"},
            {"/home/u", "d"},
            {"/home/u/.bashrc", "f"},
            {"/home/u/.profile", "f"},
            {"/home/u/.bash_logout", "f"},
            {"/home/u/.config", "d"},
            {"/home/u/.local", "d"},
            {"/home/u/.local/share", "d"},
            {"/home/u/proj", "d"},
            {"/home/u/proj/src", "d"},
            {"/home/u/proj/.git", "d"},
            {"/home/u/proj/.git/HEAD", "f"},
            {"/home/u/proj/.git/hooks", "d"},
            {"/usr", "d"},
            {"/usr/lib", "d"},
            {"/usr/lib/python3", "d"},
            {"/usr/lib/python3.11", "d"},
            {"/tmp", "d"}};
}

struct Started {
    SandboxPolicy policy;
};

// The table's protection alone, as for a writable root inside the home's configuration; the
// search's finds (`run_entries`) given as it would give them.
Started start(const std::map<std::string, std::string>& host, const std::string& workspace,
              const Environment& env = {}, PolicySettings settings = {},
              const std::vector<std::string>& run_entries = {}) {
    Started s{make_policy(settings, "/home/u", workspace, env)};
    FakeHostFs fs(host);
    std::vector<std::string> trees;
    for (const auto& [path, type] : host)
        if (path.ends_with("/.git")) trees.push_back(path.substr(0, path.size() - 5));
    protect_host_run_paths(s.policy, fs, env, trees, run_entries);
    return s;
}

const HostRunPath* find(const SandboxPolicy& policy, const std::string& path) {
    auto it = std::find_if(policy.host_run.begin(), policy.host_run.end(),
                           [&](const HostRunPath& p) { return p.path == path; });
    return it == policy.host_run.end() ? nullptr : &*it;
}

bool is_protected(const SandboxPolicy& policy, const std::string& path) {
    return std::find(policy.protected_paths.begin(), policy.protected_paths.end(), path) !=
           policy.protected_paths.end();
}

bool is_sealed(const SandboxPolicy& policy, const std::string& dir) {
    return std::find(policy.sealed.begin(), policy.sealed.end(), dir) != policy.sealed.end();
}

}  // namespace

TEST_CASE("in the home workspace the startup files that exist are bound read-only") {
    Started s = start(debian_home(), "/home/u");
    for (const char* path : {"/home/u/.bashrc", "/home/u/.profile", "/home/u/.bash_logout"}) {
        CHECK(is_protected(s.policy, path));
        REQUIRE(find(s.policy, path));
        CHECK(find(s.policy, path)->how == HostRunPath::How::bound);
        CHECK_FALSE(s.policy.can_write(path));
    }
}

TEST_CASE("a missing startup file cannot be made: the deepest folder above it is sealed") {
    Started s = start(debian_home(), "/home/u");
    // ~/.bash_profile, ~/.zshrc: their folder, the home, exists.
    CHECK(is_sealed(s.policy, "/home/u"));
    CHECK(find(s.policy, "/home/u/.bash_profile")->how == HostRunPath::How::sealed);
    CHECK(find(s.policy, "/home/u/.bash_profile")->folder == "/home/u");
    CHECK_FALSE(s.policy.can_write("/home/u/.bash_profile"));
    CHECK_FALSE(s.policy.can_write("/home/u/.zshrc"));
    // ~/.config/autostart: ~/.config exists, so it is ~/.config that is sealed, and moving
    // ~/.config aside to make a new one is a change at the home's top, sealed too.
    CHECK(is_sealed(s.policy, "/home/u/.config"));
    CHECK(find(s.policy, "/home/u/.config/autostart")->folder == "/home/u/.config");
    CHECK_FALSE(s.policy.can_write("/home/u/.config/autostart"));
    CHECK_FALSE(s.policy.can_write("/home/u/.c"));
    // ~/.local/bin and ~/.local/share/systemd/user.
    CHECK(is_sealed(s.policy, "/home/u/.local"));
    CHECK(is_sealed(s.policy, "/home/u/.local/share"));
    CHECK_FALSE(s.policy.can_write("/home/u/.local/bin"));
    // A new file at the home's top is refused by the sandbox too, so the detector offers it.
    CHECK_FALSE(s.policy.can_write("/home/u/notes.txt"));
    // Inside a folder that exists, nothing changes.
    CHECK(s.policy.can_write("/home/u/proj/notes.txt"));
    CHECK(s.policy.can_write("/home/u/proj/src/new/file.c"));
    CHECK(s.policy.can_write("/home/u/.config/app/settings.json"));
}

TEST_CASE("a workspace below the home protects nothing of the home's") {
    Started s = start(debian_home(), "/home/u/proj");
    CHECK_FALSE(find(s.policy, "/home/u/.bashrc"));
    CHECK_FALSE(is_sealed(s.policy, "/home/u"));
    CHECK(s.policy.can_write("/home/u/proj/new.txt"));  // the workspace's top stays open
}

TEST_CASE("a repository's missing editor folders are left missing: nothing is made on the host") {
    Started s = start(debian_home(), "/home/u/proj");
    for (const char* name :
         {".vscode", ".idea", ".devcontainer", ".claude", ".zed", ".cursor", ".gemini", ".codex",
          ".github/hooks", "mise.toml", ".devcontainer.json"}) {
        const std::string path = std::string("/home/u/proj/") + name;
        REQUIRE(find(s.policy, path));
        CHECK(find(s.policy, path)->how == HostRunPath::How::watched);
        CHECK_FALSE(is_protected(s.policy, path));
    }
    // A missing file whose program asks before running a new one is left for the user.
    CHECK(find(s.policy, "/home/u/proj/.mcp.json")->how == HostRunPath::How::left_missing);
    CHECK(find(s.policy, "/home/u/proj/.envrc")->how == HostRunPath::How::left_missing);
    CHECK_FALSE(is_sealed(s.policy, "/home/u/proj"));
    CHECK(s.policy.can_write("/home/u/proj/notes.txt"));
}

// Whether direnv, with `host`'s configs and the environment `env`, loads the `.envrc` at
// `path` without asking (direnv's whitelist).
bool direnv_loads_unasked(std::map<std::string, std::string> host, const Environment& env,
                          const std::string& path) {
    const ToolTrust trust = ToolTrust::of_user(FakeHostFs(std::move(host)), "/home/u", env);
    return !trust.asks_first(*repository_run_entry("", ".envrc"), path);
}

TEST_CASE("direnv's whitelist is read where direnv reads it, and matched as direnv does") {
    const std::string in_code = "/home/u/code/app/.envrc";
    auto with = [](const std::string& config, const std::string& text) {
        auto host = debian_home();
        host[config] = "f:" + text;
        return host;
    };
    const std::string prefix = "[whitelist]\nprefix = [ \"~/code\" ]\n";
    // ~/.config/direnv, unless the environment puts direnv's config elsewhere.
    CHECK(direnv_loads_unasked(with("/home/u/.config/direnv/direnv.toml", prefix), {}, in_code));
    CHECK_FALSE(direnv_loads_unasked(with("/home/u/.config/direnv/direnv.toml", prefix),
                                     {{"XDG_CONFIG_HOME", "/home/u/xdg"}}, in_code));
    CHECK(direnv_loads_unasked(with("/home/u/xdg/direnv/direnv.toml", prefix),
                               {{"XDG_CONFIG_HOME", "/home/u/xdg"}}, in_code));
    CHECK_FALSE(direnv_loads_unasked(with("/home/u/xdg/direnv/direnv.toml", prefix), {}, in_code));
    // $DIRENV_CONFIG before them both.
    CHECK(direnv_loads_unasked(with("/etc/dv/direnv.toml", prefix),
                               {{"DIRENV_CONFIG", "/etc/dv"}, {"XDG_CONFIG_HOME", "/home/u/xdg"}},
                               in_code));
    CHECK_FALSE(direnv_loads_unasked(
        with("/home/u/xdg/direnv/direnv.toml", prefix),
        {{"DIRENV_CONFIG", "/etc/dv"}, {"XDG_CONFIG_HOME", "/home/u/xdg"}}, in_code));
    // config.toml, the name before direnv 2.21, where no direnv.toml exists.
    CHECK(direnv_loads_unasked(with("/home/u/.config/direnv/config.toml", prefix), {}, in_code));
    auto both = with("/home/u/.config/direnv/config.toml", prefix);
    both["/home/u/.config/direnv/direnv.toml"] = "f:";
    CHECK_FALSE(direnv_loads_unasked(both, {}, in_code));
    // A prefix is one of the path's text, not of its folders: "~/code" covers ~/codex too.
    CHECK(direnv_loads_unasked(with("/home/u/.config/direnv/direnv.toml", prefix), {},
                               "/home/u/codex/.envrc"));
    CHECK_FALSE(direnv_loads_unasked(with("/home/u/.config/direnv/direnv.toml", prefix), {},
                                     "/home/u/other/.envrc"));
    // An exact entry names an `.envrc`, or the folder of one.
    const auto exact = with("/home/u/.config/direnv/direnv.toml",
                            "[whitelist]\nexact = [ \"~/a/\", '/home/u/b/.envrc' ]\n");
    CHECK(direnv_loads_unasked(exact, {}, "/home/u/a/.envrc"));
    CHECK(direnv_loads_unasked(exact, {}, "/home/u/b/.envrc"));
    CHECK_FALSE(direnv_loads_unasked(exact, {}, "/home/u/a/sub/.envrc"));
}

TEST_CASE("the table's entries the search found at any depth are bound read-only") {
    auto host = debian_home();
    host["/home/u/proj/src/.vscode"] = "d";
    host["/home/u/proj/src/.claude"] = "d";
    host["/home/u/proj/src/mise.toml"] = "f";
    Started s = start(
        host, "/home/u/proj", {}, {},
        {"/home/u/proj/src/.vscode", "/home/u/proj/src/.claude", "/home/u/proj/src/mise.toml"});
    for (const char* path :
         {"/home/u/proj/src/.vscode", "/home/u/proj/src/.claude", "/home/u/proj/src/mise.toml"}) {
        CHECK(is_protected(s.policy, path));
        CHECK_FALSE(s.policy.can_write(std::string(path) + "/x"));
    }
    CHECK(s.policy.can_write("/home/u/proj/src/main.c"));
}

TEST_CASE("the table's rows are found by name, and by folder and name") {
    CHECK(repository_run_entry("src", ".vscode"));
    CHECK(repository_run_entry("deep", "mise.toml"));
    CHECK(repository_run_entry(".github", "hooks"));
    CHECK(repository_run_entry(".config", "mise"));
    CHECK_FALSE(repository_run_entry("src", "hooks"));
    CHECK_FALSE(repository_run_entry(".github", "workflows"));
    CHECK_FALSE(repository_run_entry("src", "main.c"));
}

TEST_CASE("a repository's auto-run files that exist are bound read-only") {
    auto host = debian_home();
    host["/home/u/proj/.envrc"] = "f";
    host["/home/u/proj/.mcp.json"] = "f";
    host["/home/u/proj/.vscode"] = "d";
    host["/home/u/proj/.vscode/settings.json"] = "f";
    Started s = start(host, "/home/u/proj");
    for (const char* path :
         {"/home/u/proj/.envrc", "/home/u/proj/.mcp.json", "/home/u/proj/.vscode"})
        CHECK(is_protected(s.policy, path));
    CHECK_FALSE(s.policy.can_write("/home/u/proj/.vscode/settings.json"));
}

TEST_CASE("a hook manager's config counts where its hook is installed") {
    auto host = debian_home();
    SECTION("pre-commit installed, its config missing: the work tree's top is sealed") {
        host["/home/u/proj/.git/hooks/pre-commit"] =
            "f:#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n";
        Started s = start(host, "/home/u/proj");
        CHECK(find(s.policy, "/home/u/proj/.pre-commit-config.yaml")->how ==
              HostRunPath::How::sealed);
        CHECK_FALSE(s.policy.can_write("/home/u/proj/.pre-commit-config.yaml"));
    }
    SECTION("pre-commit installed, its config there: bound read-only") {
        host["/home/u/proj/.git/hooks/pre-commit"] = "f:# File generated by pre-commit\n";
        host["/home/u/proj/.pre-commit-config.yaml"] = "f";
        Started s = start(host, "/home/u/proj");
        CHECK(is_protected(s.policy, "/home/u/proj/.pre-commit-config.yaml"));
        CHECK_FALSE(is_sealed(s.policy, "/home/u/proj"));
    }
    SECTION("lefthook installed: its local config cannot be made") {
        host["/home/u/proj/.git/hooks/pre-commit"] = "f:#!/bin/sh\ncall_lefthook run pre-commit\n";
        host["/home/u/proj/lefthook.yml"] = "f";
        Started s = start(host, "/home/u/proj");
        CHECK(is_protected(s.policy, "/home/u/proj/lefthook.yml"));
        CHECK_FALSE(s.policy.can_write("/home/u/proj/lefthook-local.yml"));
    }
    SECTION("no hook installed (samples only): the configs are ordinary files") {
        host["/home/u/proj/.git/hooks/pre-commit.sample"] = "f:# pre-commit lefthook\n";
        Started s = start(host, "/home/u/proj");
        CHECK_FALSE(find(s.policy, "/home/u/proj/.pre-commit-config.yaml"));
        CHECK(s.policy.can_write("/home/u/proj/.pre-commit-config.yaml"));
    }
}

TEST_CASE("sandbox.writable naming one exact path opens it") {
    PolicySettings settings;
    settings.writable = {"~/.local/bin"};
    auto host = debian_home();
    host["/home/u/.local/bin"] = "d";
    Started s = start(host, "/home/u", {}, settings);
    REQUIRE(find(s.policy, "/home/u/.local/bin"));
    CHECK(find(s.policy, "/home/u/.local/bin")->how == HostRunPath::How::opened);
    CHECK(s.policy.can_write("/home/u/.local/bin/tool"));
    CHECK_FALSE(s.policy.can_write("/home/u/.bashrc"));  // the rest stays protected
}

TEST_CASE("the user's PATH folders and the variables that move startup files count") {
    auto host = debian_home();
    host["/home/u/proj/bin"] = "d";
    host["/home/u/proj/zsh"] = "d";
    host["/home/u/proj/zsh/.zshrc"] = "f";
    Started s =
        start(host, "/home/u/proj",
              {{"PATH", "/home/u/proj/bin:/usr/bin:relative"}, {"ZDOTDIR", "/home/u/proj/zsh"}});
    CHECK(is_protected(s.policy, "/home/u/proj/bin"));
    CHECK(is_protected(s.policy, "/home/u/proj/zsh/.zshrc"));
    CHECK_FALSE(s.policy.can_write("/home/u/proj/zsh/.zshenv"));  // missing: zsh/ sealed
    CHECK_FALSE(find(s.policy, "/usr/bin"));                      // outside the roots
}

TEST_CASE("Python's user site folders of the host's Pythons count, whole") {
    Started s = start(debian_home(), "/home/u");
    CHECK(find(s.policy, "/home/u/.local/lib/python3.11/site-packages"));
    CHECK_FALSE(find(s.policy, "/home/u/.local/lib/python3/site-packages"));
    auto host = debian_home();
    host["/home/u/.local/lib"] = "d";
    host["/home/u/.local/lib/python3.11"] = "d";
    host["/home/u/.local/lib/python3.11/site-packages"] = "d";
    Started with_site = start(host, "/home/u");
    CHECK(is_protected(with_site.policy, "/home/u/.local/lib/python3.11/site-packages"));
    CHECK_FALSE(
        with_site.policy.can_write("/home/u/.local/lib/python3.11/site-packages/usercustomize.py"));
}

TEST_CASE("a startup file that is a link keeps its folder's top from changing") {
    auto host = debian_home();
    host["/home/u/.bashrc"] = "l:/home/u/dotfiles/bashrc";
    host["/home/u/dotfiles"] = "d";
    host["/home/u/dotfiles/bashrc"] = "f";
    Started s = start(host, "/home/u");
    CHECK(is_sealed(s.policy, "/home/u"));  // the link cannot be replaced
    CHECK(is_protected(s.policy, "/home/u/.bashrc"));
}

TEST_CASE("a folder of a writable root that holds a hidden path is sealed") {
    auto host = debian_home();
    host["/home/u/proj/.aws"] = "d";
    PolicySettings settings;
    settings.hidden = {"/home/u/proj/.aws"};
    Started s = start(host, "/home/u/proj", {}, settings);
    CHECK(is_sealed(s.policy, "/home/u/proj"));
    CHECK_FALSE(s.policy.can_write("/home/u/proj/.aws"));
    CHECK_FALSE(s.policy.can_write("/home/u/proj/new.txt"));
}

TEST_CASE("plan mode protects nothing more: nothing is writable anyway") {
    PolicySettings settings;
    settings.read_only = true;
    Started s = start(debian_home(), "/home/u", {}, settings);
    CHECK(s.policy.host_run.empty());
    CHECK(s.policy.sealed.empty());
    SandboxPolicy home = make_policy(settings, "/home/u", "/home/u", {});
    const auto before = home.protected_paths;
    protect_home_configuration(home, FakeHostFs(debian_home()));
    CHECK(home.protected_paths == before);
    CHECK(home.sealed.empty());
}

TEST_CASE("started in the home, every dot entry is read-only whole, listed or not") {
    std::map<std::string, std::string> host = debian_home();
    host["/home/u/.sqliterc"] = "f";
    host["/home/u/.docker"] = "d";
    host["/home/u/.ssh"] = "d";
    host["/home/u/.npm"] = "d";
    FakeHostFs fs(host);
    PolicySettings settings;
    settings.writable = {"/home/u/.npm"};
    SandboxPolicy policy = make_policy(settings, "/home/u", "/home/u", {});
    protect_home_configuration(policy, fs);
    for (const char* path : {"/home/u/.sqliterc", "/home/u/.docker", "/home/u/.config"}) {
        CHECK(is_protected(policy, path));
        CHECK_FALSE(policy.can_write(std::string(path) + "/plugin"));
    }
    CHECK_FALSE(policy.can_write("/home/u/.sqliterc"));
    // A new dot entry cannot be made: the home's top is sealed.
    CHECK(is_sealed(policy, "/home/u"));
    CHECK_FALSE(policy.can_write("/home/u/.newtoolrc"));
    // The user's own entries stay writable; an entry sandbox.writable names stays open.
    CHECK(policy.can_write("/home/u/proj/src/main.c"));
    CHECK(policy.can_write("/home/u/.npm/cache"));
    REQUIRE(find(policy, "/home/u/.npm"));
    CHECK(find(policy, "/home/u/.npm")->how == HostRunPath::How::opened);
    // A hidden entry stays hidden: not bound at all.
    CHECK_FALSE(is_protected(policy, "/home/u/.ssh"));
    // The table's rows in those entries say where they are read-only, and seal nothing more.
    protect_host_run_paths(policy, fs, {}, {}, {});
    REQUIRE(find(policy, "/home/u/.config/autostart"));
    CHECK(find(policy, "/home/u/.config/autostart")->how == HostRunPath::How::inside);
    CHECK(find(policy, "/home/u/.config/autostart")->folder == "/home/u/.config");
    CHECK_FALSE(is_sealed(policy, "/home/u/.config"));
    CHECK(find(policy, "/home/u/.bashrc")->reason == std::string("every interactive bash"));
}

TEST_CASE("a dot entry of the home opened on purpose keeps the table's rows in it read-only") {
    // The user opened ~/.config and ~/.local by name: their own files there land, but what the
    // host runs from them later stays as in any writable root (a refused write gets the offer).
    std::map<std::string, std::string> host = debian_home();
    host["/home/u/.config/autostart"] = "d";
    host["/home/u/.config/app"] = "d";
    host["/home/u/.local/bin"] = "d";
    host["/home/u/.local/state"] = "d";
    FakeHostFs fs(host);
    PolicySettings settings;
    settings.writable = {"/home/u/.config", "/home/u/.local"};
    SandboxPolicy policy = make_policy(settings, "/home/u", "/home/u", {});
    protect_home_configuration(policy, fs);
    protect_host_run_paths(policy, fs, {}, {}, {});
    CHECK(find(policy, "/home/u/.config")->how == HostRunPath::How::opened);
    CHECK(policy.can_write("/home/u/.config/app/settings.json"));
    CHECK(policy.can_write("/home/u/.local/state/notes.txt"));
    CHECK(find(policy, "/home/u/.config/autostart")->how == HostRunPath::How::bound);
    CHECK(find(policy, "/home/u/.local/bin")->how == HostRunPath::How::bound);
    CHECK(find(policy, "/home/u/.config/systemd/user")->how == HostRunPath::How::sealed);
    // Missing ones cannot be made: the folder above them is sealed.
    for (const char* path : {"/home/u/.config/autostart/x.desktop", "/home/u/.local/bin/ls",
                             "/home/u/.config/systemd", "/home/u/.config/fish"})
        CHECK_FALSE(policy.can_write(path));
    // An entry not opened stays read-only whole.
    CHECK_FALSE(policy.can_write("/home/u/.bashrc"));
}

TEST_CASE("a workspace below the home makes none of the home's entries read-only") {
    FakeHostFs fs(debian_home());
    SandboxPolicy policy = make_policy({}, "/home/u", "/home/u/proj", {});
    const auto before = policy.protected_paths;
    protect_home_configuration(policy, fs);
    CHECK(policy.protected_paths == before);
    CHECK(policy.sealed.empty());
}

TEST_CASE("a policy without a home still ends: no climb from a relative path") {
    // Without a home the table's home paths are relative; looking for the folder above a
    // missing one must stop where it cannot go higher (it once looped forever there).
    SandboxPolicy policy = make_policy({}, "", "/srv/app", {});
    FakeHostFs fs({{"/srv", "d"}, {"/srv/app", "d"}, {"/srv/app/src", "d"}});
    protect_host_run_paths(policy, fs, {}, {}, {});
    CHECK(policy.writable.size() >= 1);
    CHECK(std::none_of(policy.sealed.begin(), policy.sealed.end(),
                       [](const std::string& p) { return p.empty() || p.front() != '/'; }));
}
