#include "sandbox/protection/repository_watch.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "tests/unit/read_to_end.h"
#include "tests/unit/temp_dir.h"

using namespace caretz;
namespace fs = std::filesystem;

namespace {

// A writable root of its own in /tmp, removed at the end.
struct Workspace {
    std::string root;
    Workspace() {
        char dir[] = "/tmp/caretz-watch-XXXXXX";
        root = ::mkdtemp(dir);
        root = fs::canonical(root).string();
    }
    ~Workspace() { fs::remove_all(root); }
    std::string operator/(const std::string& sub) const { return root + "/" + sub; }
    SandboxPolicy policy() const {
        SandboxPolicy policy;
        policy.workspace = root;
        policy.writable = {root};
        return policy;
    }
    // Runs a shell command in the root; git with an identity and none of the user's config.
    void sh(const std::string& command) const {
        std::string line = "cd '" + root +
                           "' && export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "
                           "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t "
                           "GIT_COMMITTER_EMAIL=t@t && (" +
                           command + ") >/dev/null 2>&1";
        REQUIRE(std::system(line.c_str()) == 0);
    }
};

bool has(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

using Kind = RepositoryFinding::Kind;

// The lines of /proc/self/fdinfo that start with `prefix`: one per inotify watch ("inotify
// wd:") or fanotify mark ("fanotify ino:") this process holds.
std::vector<std::string> fdinfo_lines(const std::string& prefix) {
    std::vector<std::string> lines;
    for (const auto& entry : fs::directory_iterator("/proc/self/fdinfo")) {
        std::ifstream in(entry.path());
        for (std::string line; std::getline(in, line);)
            if (line.starts_with(prefix)) lines.push_back(line);
    }
    return lines;
}

size_t inotify_watches() {
    return fdinfo_lines("inotify wd:").size();
}

// The inodes of the folders under a fanotify mark ("fanotify") or an inotify watch
// ("inotify") of this process.
std::set<ino_t> watched_inodes(const std::string& kind) {
    std::set<ino_t> inodes;
    for (const auto& line : fdinfo_lines(kind + " ")) {
        const size_t at = line.find(" ino:");
        if (at != std::string::npos) inodes.insert(std::stoull(line.substr(at + 5), nullptr, 16));
    }
    return inodes;
}

// Runs `scenario` in a child process, in a user namespace of its own whose limits are
// `watches` inotify watches and `marks` fanotify marks, and `instances` inotify instances
// when not -1 (the user's own limits still apply above them). Returns what went wrong, as
// `scenario` says it, or "" when nothing did.
std::string with_limits(int watches, int marks, const std::function<std::string()>& scenario,
                        int instances = -1) {
    int report[2];
    REQUIRE(::pipe(report) == 0);
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(report[0]);
        auto put = [](const std::string& path, const std::string& text) {
            std::ofstream(path) << text;
        };
        std::string said;
        try {
            if (::unshare(CLONE_NEWUSER) != 0) throw std::runtime_error("unshare failed");
            put("/proc/self/setgroups", "deny");
            put("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1");
            put("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
            put("/proc/sys/user/max_inotify_watches", std::to_string(watches));
            put("/proc/sys/user/max_fanotify_marks", std::to_string(marks));
            if (instances >= 0)
                put("/proc/sys/user/max_inotify_instances", std::to_string(instances));
            said = scenario();
        } catch (const std::exception& e) {
            said = std::string("failed: ") + e.what();
        } catch (...) {
            said = "failed";
        }
        ssize_t ignored = ::write(report[1], said.data(), said.size());
        (void)ignored;
        ::_exit(0);
    }
    ::close(report[1]);
    std::string said;
    char buf[4096];
    for (ssize_t n; (n = ::read(report[0], buf, sizeof buf)) > 0;)
        said.append(buf, static_cast<size_t>(n));
    ::close(report[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? said : "the child died";
}

// 60 top folders with 100 folders each, older than the file system's clock can tell apart
// from a change made now.
void make_old_tree(const Workspace& ws) {
    ws.sh(
        "for t in $(seq 0 59); do for o in $(seq 0 99); do echo t$t/o$o; done; done | "
        "xargs mkdir -p");
    ::sleep(2);
}

// The first folder of make_old_tree's tree whose inode `pick` takes, or "".
std::string tree_folder(const Workspace& ws, const std::function<bool(ino_t)>& pick) {
    for (int t = 0; t < 60; ++t)
        for (int o = 0; o < 100; ++o) {
            const std::string name = "t" + std::to_string(t) + "/o" + std::to_string(o);
            struct stat st;
            if (::stat((ws / name).c_str(), &st) == 0 && pick(st.st_ino)) return name;
        }
    return "";
}

bool found(const std::vector<RepositoryFinding>& findings, Kind kind, const std::string& path) {
    return std::any_of(findings.begin(), findings.end(),
                       [&](const auto& f) { return f.kind == kind && f.path == path; });
}

}  // namespace

TEST_CASE("the start-up search finds repositories however deep, bare ones and worktrees") {
    Workspace ws;
    std::string deep = "a/b/c/d/e/f/g/h/i/j/k/deep";  // the repository is 12 folders down
    ws.sh(
        "git init -q main && git -C main commit -q --allow-empty -m i && "
        "git -C main worktree add -q ../wt && git init -q " +
        deep + " && git init -q --bare store.git");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    const auto& p = policy.protected_paths;
    for (const std::string& path : std::vector<std::string>{
             deep + "/.git/hooks", deep + "/.git/config", "main/.git/hooks", "main/.git/config",
             "store.git/hooks", "store.git/config", "main/.git/worktrees/wt/commondir", "wt/.git"})
        CHECK(has(p, ws / path));
    CHECK(watch.start_notes().empty());
    CHECK(watch.check().empty());
}

// A tree wide and deep enough for the search to call its helper threads: every repository is
// found, however the folders were shared out between the threads.
TEST_CASE("the start-up search of a large tree finds every repository") {
    Workspace ws;
    std::vector<std::string> repositories;
    std::string script = "mkdir -p";
    for (int top = 0; top < 40; ++top) {
        for (int sub = 0; sub < 12; ++sub) {
            const std::string dir = "t" + std::to_string(top) + "/s" + std::to_string(sub) + "/x/y";
            script += " " + dir;
            if ((top * 12 + sub) % 37 == 0) repositories.push_back(dir + "/.git");
        }
    }
    for (const auto& git : repositories) script += " " + git + "/objects";
    script += " && for g in";
    for (const auto& git : repositories) script += " " + git;
    script += "; do echo 'ref: refs/heads/main' > $g/HEAD; done";
    ws.sh(script);
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    for (const auto& git : repositories) {
        INFO(git);
        CHECK(has(policy.protected_paths, ws / (git + "/hooks")));
        CHECK(has(policy.protected_paths, ws / (git + "/config")));
    }
    CHECK(policy.protected_paths.size() >= 2 * repositories.size());
}

TEST_CASE("a repository made after the start is found, and its hooks and config kept safe") {
    Workspace ws;
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    ws.sh(
        "mkdir -p src/x && git init -q src/x/sub && cd src/x/sub && "
        "git remote add origin https://example.invalid/r.git && "
        "printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit && "
        "chmod +x .git/hooks/pre-commit && git config core.fsmonitor 'touch PWNED' && "
        "git config alias.st '!touch PWNED' && git config core.hooksPath /tmp");
    const std::string git = ws / "src/x/sub/.git";
    auto findings = watch.check();
    CHECK(found(findings, Kind::protected_repository, git));
    CHECK(found(findings, Kind::hook_disabled, git + "/hooks/pre-commit"));
    CHECK(found(findings, Kind::config_stripped, git + "/config"));
    CHECK_FALSE(fs::exists(git + "/hooks/pre-commit"));
    CHECK(fs::exists(git + "/hooks/pre-commit.disabled-by-caretz"));
    CHECK(fs::exists(git + "/hooks/pre-commit.sample"));  // samples stay where they are
    const std::string config = file_contents(git + "/config");
    CHECK(config.find("fsmonitor") == std::string::npos);
    CHECK(config.find("hooksPath") == std::string::npos);
    CHECK(config.find("alias") == std::string::npos);
    CHECK(config.find("https://example.invalid/r.git") != std::string::npos);
    CHECK(file_contents(git + "/config.disabled-by-caretz").find("fsmonitor") != std::string::npos);
    CHECK(has(watch.protected_paths(), git + "/hooks"));
    CHECK(has(watch.protected_paths(), git + "/config"));
    // The repository still works.
    ws.sh("cd src/x/sub && git commit -q --allow-empty -m ok && git status");
    CHECK_FALSE(fs::exists(ws / "src/x/sub/PWNED"));
    // Nothing new: nothing to say.
    CHECK(watch.check().empty());
}

TEST_CASE("a clean clone is protected without anything moved") {
    Workspace ws;
    ws.sh("git init -q origin && git -C origin commit -q --allow-empty -m i");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    ws.sh("git clone -q origin copy");
    auto findings = watch.check();
    REQUIRE(findings.size() == 1);
    CHECK(found(findings, Kind::protected_repository, ws / "copy/.git"));
}

TEST_CASE("without watches, change times find what commands make anywhere in a large tree") {
    // As `caretz exec` searches (and every folder past the inotify watch limit): no watch, the
    // change time of each folder compared at the check. 6,000 folders, enough for the search
    // and the comparison to run on several threads.
    Workspace ws;
    ws.sh("git init -q t3/o5/old");
    make_old_tree(ws);  // only a real change lists a folder again
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::none);
    CHECK(has(policy.protected_paths, ws / "t3/o5/old/.git/hooks"));
    CHECK(watch.check().empty());
    ws.sh(
        "git init -q t41/o77/new && printf x > t41/o77/new/.git/hooks/pre-push && "
        "mkdir -p t12/o3/x/y && git init -q t12/o3/x/y/z && git init -q t59/o99/.hidden");
    auto findings = watch.check();
    CHECK(found(findings, Kind::protected_repository, ws / "t41/o77/new/.git"));
    CHECK(found(findings, Kind::hook_disabled, ws / "t41/o77/new/.git/hooks/pre-push"));
    CHECK(found(findings, Kind::protected_repository, ws / "t12/o3/x/y/z/.git"));
    CHECK(found(findings, Kind::protected_repository, ws / "t59/o99/.hidden/.git"));
    CHECK(watch.check().empty());
}

TEST_CASE("a hook planted later in a repository without hooks is moved aside") {
    Workspace ws;
    ws.sh("git init -q --template= r");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    CHECK(has(policy.protected_paths, ws / "r/.git/hooks"));
    // What create_missing_git_paths would have made before the sandbox; here, a new
    // repository that gets its hooks folder from the check.
    ws.sh(
        "git init -q --template= s && mkdir s/.git/hooks && printf x > s/.git/hooks/post-checkout");
    auto findings = watch.check();
    CHECK(found(findings, Kind::hook_disabled, ws / "s/.git/hooks/post-checkout"));
}

TEST_CASE("a commondir that sends git to a folder the sandbox may write is moved aside") {
    Workspace ws;
    ws.sh("git init -q r && mkdir -p evil/objects evil/refs evil/hooks");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    ws.sh("echo ../../evil > r/.git/commondir");
    auto findings = watch.check();
    CHECK(found(findings, Kind::redirect_moved_aside, ws / "r/.git/commondir"));
    CHECK_FALSE(fs::exists(ws / "r/.git/commondir"));
}

TEST_CASE("a repository made inside a new submodule folder of .git is found") {
    Workspace ws;
    ws.sh("git init -q r && git init -q sub && git -C sub commit -q --allow-empty -m i");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    ws.sh(
        "git clone -q --bare sub r/.git/modules/lib && "
        "printf x > r/.git/modules/lib/hooks/pre-commit");
    auto findings = watch.check();
    CHECK(found(findings, Kind::protected_repository, ws / "r/.git/modules/lib"));
    CHECK(found(findings, Kind::hook_disabled, ws / "r/.git/modules/lib/hooks/pre-commit"));
}

TEST_CASE("a folder the search cannot read is protected whole") {
    if (::geteuid() == 0) return;  // root reads every folder
    Workspace ws;
    ws.sh("mkdir -p closed/inner && chmod 000 closed");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    CHECK(has(policy.protected_paths, ws / "closed"));
    ::chmod((ws / "closed").c_str(), 0700);
}

TEST_CASE("files a config includes and a hooks folder it names are protected where writable") {
    Workspace ws;
    ws.sh(
        "git init -q r && git -C r config include.path ../shared.cfg && mkdir r/.githooks && "
        "git -C r config core.hooksPath .githooks && mkdir home && "
        "printf '[includeIf \"gitdir:/\"]\\n\\tpath = ~/more.cfg\\n' > home/.gitconfig && "
        "printf '[core]\\n\\thooksPath = ~/hooks\\n' > home/more.cfg");
    SandboxPolicy policy = ws.policy();
    policy.home = ws / "home";
    RepositoryWatch watch(policy, {ws / "home/.gitconfig", ws / "home/.config/git/config"}, {});
    for (const char* path : {"r/.githooks", "home/.gitconfig", "home/more.cfg"})
        CHECK(has(policy.protected_paths, ws / path));
    // Missing ones are not made on the host: the folder above each is sealed instead, so the
    // sandbox cannot make them either.
    for (const char* path : {"r/shared.cfg", "home/hooks", "home/.config/git/config"})
        CHECK_FALSE(fs::exists(ws / path));
    for (const char* sealed : {"r", "home"}) CHECK(has(policy.sealed, ws / sealed));
    CHECK_FALSE(fs::exists(ws / "home/.config"));
}

TEST_CASE("a hooks folder in the work tree protects its hook manager's whole folder") {
    Workspace ws;
    ws.sh(
        "git init -q r && mkdir -p r/.husky/_ && echo 'npx lint' > r/.husky/pre-commit && "
        "git -C r config core.hooksPath .husky/_");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    CHECK(has(policy.protected_paths, ws / "r/.husky"));
}

TEST_CASE("the table's entries are found at every depth, and one made later is moved aside") {
    Workspace ws;
    ws.sh("git init -q r && mkdir -p r/sub/.vscode r/a/b/.claude r/.zed && touch r/a/mise.toml");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::repositories);
    for (const char* path : {"r/sub/.vscode", "r/a/b/.claude", "r/.zed", "r/a/mise.toml"})
        CHECK(has(watch.run_entries(), ws / path));
    watch.check();
    ws.sh(
        "mkdir -p r/sub/deep/.vscode && echo '{}' > r/sub/deep/.vscode/tasks.json && "
        "echo x > r/.mcp.json && echo ok > r/sub/deep/notes.txt");
    auto findings = watch.check();
    CHECK_FALSE(fs::exists(ws / "r/sub/deep/.vscode"));
    CHECK(fs::exists(ws / "r/sub/deep/.vscode.disabled-by-caretz/tasks.json"));
    CHECK(std::any_of(findings.begin(), findings.end(), [&](const RepositoryFinding& f) {
        return f.kind == RepositoryFinding::Kind::run_entry_moved_aside &&
               f.path == ws / "r/sub/deep/.vscode";
    }));
    // Claude Code asks before it starts a new .mcp.json's servers: left where it is.
    CHECK(fs::exists(ws / "r/.mcp.json"));
    CHECK(fs::exists(ws / "r/sub/deep/notes.txt"));
}

TEST_CASE("a config outside the writable roots is followed but nothing outside is made") {
    Workspace ws;
    Workspace outside;
    outside.sh("printf '[include]\\n\\tpath = " + ws.root + "/inc.cfg\\n\\tpath = " + outside.root +
               "/gone.cfg\\n' > .gitconfig");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {outside / ".gitconfig"}, {});
    // The missing one in the workspace is not made either: its folder is sealed.
    CHECK(has(policy.sealed, ws.root));
    CHECK_FALSE(fs::exists(ws / "inc.cfg"));
    CHECK_FALSE(has(policy.protected_paths, outside / ".gitconfig"));
    CHECK_FALSE(fs::exists(outside / "gone.cfg"));
}

TEST_CASE("folders without subfolders are listed: their repositories and the table's files") {
    // A folder with two links has no subfolders (ext4, xfs, tmpfs), but it may still hold a
    // `.git` file, a worktree's git folder or a file of the table, at any depth.
    Workspace ws;
    ws.sh(
        "git init -q main && git -C main commit -q --allow-empty -m i && "
        "git -C main worktree add -q ../wt && rm -rf main/.git/worktrees/wt/logs && "
        "mkdir lone && ln -s ../main/.git lone/.git && mkdir -p plain/x && "
        "mkdir -p main/app/web && cd main/app/web && echo 'source_env .envrc.local' > .envrc && "
        "echo 'export A=1' > .envrc.local && echo '[env]' > mise.toml && echo '{}' > .mcp.json "
        "&& echo x > notes.txt");
    for (const char* leaf : {"lone", "wt", "main/.git/worktrees/wt", "main/app/web"})
        REQUIRE(fs::hard_link_count(ws / leaf) == 2);
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    const auto& p = policy.protected_paths;
    CHECK(has(p, ws / "lone/.git"));
    CHECK(has(p, ws / "wt/.git"));
    CHECK(has(p, ws / "main/.git/worktrees/wt/commondir"));
    CHECK(has(p, ws / "main/.git/worktrees/wt/config"));
    CHECK_FALSE(std::any_of(p.begin(), p.end(),
                            [&](const auto& path) { return path.starts_with(ws / "plain"); }));
    // The table's files there: protect_host_run_paths() binds each read-only, with what the
    // `.envrc` sources.
    for (const char* entry : {".envrc", "mise.toml", ".mcp.json"})
        CHECK(has(watch.run_entries(), ws / "main/app/web/" + entry));
    CHECK_FALSE(has(watch.run_entries(), ws / "main/app/web/notes.txt"));
}

TEST_CASE("the start adds its watches after the search, and change times cover the time between") {
    Workspace ws;
    make_old_tree(ws);
    // However far the watches have got when a command writes, the check finds what it wrote:
    // in a folder watched already, by the event; in one not yet watched, or watched after the
    // write, by its change time.
    int n = 0;
    for (int delay_ms : {0, 1, 3, 10, 30, 100}) {
        SandboxPolicy policy = ws.policy();
        RepositoryWatch watch(policy, {}, {});
        ::usleep(delay_ms * 1000);
        ++n;
        const std::string repo = "t" + std::to_string(7 * n) + "/o" + std::to_string(13 * n);
        ws.sh("git init -q " + repo + " && printf x > " + repo + "/.git/hooks/pre-push");
        auto findings = watch.check();
        INFO("after " << delay_ms << " ms");
        CHECK(found(findings, Kind::protected_repository, ws / (repo + "/.git")));
        CHECK(found(findings, Kind::hook_disabled, ws / (repo + "/.git/hooks/pre-push")));
        CHECK(watch.check().empty());
    }
    // And every folder gets its watch soon after the start, checks in between or not.
    const size_t before = inotify_watches();
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {});
    watch.check();
    const size_t folders = 1 + 60 + 6000 + n * 3;  // the root, the tree, the new repositories
    size_t added = 0;
    for (int i = 0; i < 200 && added < folders; ++i) {
        ::usleep(50 * 1000);
        added = inotify_watches() - before;
    }
    CHECK(added >= folders);
}

TEST_CASE("past the inotify limit, fanotify marks watch the other folders") {
    Workspace ws;
    make_old_tree(ws);
    const std::string said = with_limits(2000, 1000000, [&] {
        SandboxPolicy policy = ws.policy();
        RepositoryWatch watch(policy, {}, {});
        std::ostringstream wrong;
        for (const auto& f : watch.check())
            if (f.kind == Kind::watch_limit) wrong << "said the limit was reached; ";
        // Every folder is watched: the root and the tree, 6,061 in all.
        const std::set<ino_t> marked = watched_inodes("fanotify");
        if (inotify_watches() + marked.size() != 6061)
            wrong << inotify_watches() << " watches and " << marked.size() << " marks; ";
        // A repository made in a folder with a mark is found by its event alone: no folder
        // is left to change times.
        const std::string folder = tree_folder(ws, [&](ino_t ino) { return marked.count(ino); });
        if (folder.empty()) return wrong.str() + "no folder has a mark";
        ws.sh("git init -q " + folder + "/new && printf x > " + folder +
              "/new/.git/hooks/pre-push && mkdir -p " + folder + "/a/b && git init -q " + folder +
              "/a/b/c");
        auto findings = watch.check();
        if (!found(findings, Kind::protected_repository, ws / (folder + "/new/.git")))
            wrong << "did not find " << folder << "/new; ";
        if (!found(findings, Kind::hook_disabled, ws / (folder + "/new/.git/hooks/pre-push")))
            wrong << "did not move the hook aside; ";
        if (!found(findings, Kind::protected_repository, ws / (folder + "/a/b/c/.git")))
            wrong << "did not find " << folder << "/a/b/c; ";
        if (!watch.check().empty()) wrong << "found something again; ";
        return wrong.str();
    });
    CHECK(said == "");
}

TEST_CASE("past both limits, change times cover the folders left, and Caretz says so") {
    Workspace ws;
    make_old_tree(ws);
    const std::string said = with_limits(1000, 1000, [&] {
        SandboxPolicy policy = ws.policy();
        RepositoryWatch watch(policy, {}, {});
        std::ostringstream wrong;
        auto first = watch.check();
        auto limit = std::find_if(first.begin(), first.end(),
                                  [](const auto& f) { return f.kind == Kind::watch_limit; });
        if (limit == first.end()) return std::string("did not say the limits were reached");
        if (std::stoi(limit->detail) < 4061) wrong << "only " << limit->detail << " unwatched; ";
        if (describe(*limit).find("fs.fanotify.max_user_marks") == std::string::npos)
            wrong << "did not name the fanotify limit; ";
        // In a folder with neither, by its change time.
        std::set<ino_t> watched = watched_inodes("fanotify");
        watched.merge(watched_inodes("inotify"));
        const std::string folder = tree_folder(ws, [&](ino_t ino) { return !watched.count(ino); });
        if (folder.empty()) return wrong.str() + "every folder is watched";
        ws.sh("git init -q " + folder + "/new");
        if (!found(watch.check(), Kind::protected_repository, ws / (folder + "/new/.git")))
            wrong << "did not find " << folder << "/new; ";
        return wrong.str();
    });
    CHECK(said == "");
}

namespace {

// The records in Caretz's state folder `state` (search_record.h), by inode.
std::vector<ino_t> records_in(const std::string& state) {
    std::vector<ino_t> inodes;
    for (const auto& entry : fs::directory_iterator(state)) {
        struct stat st;
        if (entry.path().filename().string().starts_with("search-") &&
            ::stat(entry.path().c_str(), &st) == 0)
            inodes.push_back(st.st_ino);
    }
    return inodes;
}

// The record a start in `ws` leaves in `state`, as the next start would read it.
SearchRecord recorded_start(const Workspace& ws, const std::string& state) {
    {
        SandboxPolicy policy = ws.policy();
        RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::none, state);
    }
    auto record = read_search_record(search_record_file(state, {ws.root}, {}), {ws.root});
    REQUIRE(record);
    return *record;
}

// `record` written over the one a start in `ws` left in `state`.
void rewrite_record(const Workspace& ws, const std::string& state, const SearchRecord& record) {
    REQUIRE(write_search_record(search_record_file(state, {ws.root}, {}), record.folders, record));
}

}  // namespace

TEST_CASE(
    "a start in a large tree keeps its search, and the next one looks again where things changed") {
    Workspace ws;
    TempDir dir;
    const std::string state = dir.path();
    ws.sh("git init -q t1/o1/old && git init -q t2/o2/kept");
    make_old_tree(ws);
    auto starts = [&](RepositoryWatch::Watching watching) {
        SandboxPolicy policy = ws.policy();
        auto watch = std::make_unique<RepositoryWatch>(policy, std::vector<std::string>{},
                                                       ToolTrust{}, watching, state);
        return std::make_pair(std::move(watch), policy.protected_paths);
    };
    {
        auto [watch, p] = starts(RepositoryWatch::Watching::none);
        CHECK(has(p, ws / "t1/o1/old/.git/hooks"));
        CHECK(has(p, ws / "t2/o2/kept/.git/config"));
    }
    const std::vector<ino_t> first = records_in(state);
    REQUIRE(first.size() == 1);
    {
        // Nothing changed: the same findings, and the record stays as it is.
        auto [watch, p] = starts(RepositoryWatch::Watching::none);
        CHECK(has(p, ws / "t1/o1/old/.git/hooks"));
        CHECK(has(p, ws / "t2/o2/kept/.git/config"));
    }
    CHECK(records_in(state) == first);
    // A repository made deep inside a folder of the record, one in a new folder, one in a
    // folder whose folder changed too, and one removed.
    ws.sh(
        "git init -q t5/o7/new/deep/er && git init -q t9/fresh && git init -q t6/o6/x/r && "
        "touch t6/file && rm -rf t1/o1/old");
    {
        auto [watch, p] = starts(RepositoryWatch::Watching::repositories);
        CHECK(has(p, ws / "t5/o7/new/deep/er/.git/hooks"));
        CHECK(has(p, ws / "t9/fresh/.git/hooks"));
        CHECK(has(p, ws / "t6/o6/x/r/.git/config"));
        CHECK(has(p, ws / "t2/o2/kept/.git/hooks"));
        CHECK_FALSE(std::any_of(p.begin(), p.end(), [&](const auto& path) {
            return path.starts_with(ws / "t1/o1/old");
        }));
        // A session started from the record sees what its commands make.
        ws.sh("git init -q t30/o30/later");
        CHECK(found(watch->check(), Kind::protected_repository, ws / "t30/o30/later/.git"));
    }
    // A few folders changed: the record stays, and the next start lists them again.
    CHECK(records_in(state) == first);
    ws.sh("rm -rf t4?");  // 1,010 folders of 6,061 gone
    {
        auto [watch, p] = starts(RepositoryWatch::Watching::none);
        CHECK(has(p, ws / "t5/o7/new/deep/er/.git/hooks"));
        CHECK(has(p, ws / "t30/o30/later/.git/hooks"));
        CHECK(has(p, ws / "t2/o2/kept/.git/hooks"));
    }
    // Many did: it is written again.
    const std::vector<ino_t> second = records_in(state);
    REQUIRE(second.size() == 1);
    CHECK(second != first);
    {
        auto [watch, p] = starts(RepositoryWatch::Watching::none);
        CHECK(has(p, ws / "t30/o30/later/.git/hooks"));
        CHECK(has(p, ws / "t6/o6/x/r/.git/config"));
    }
}

// The record is Caretz's own (only the user can write its folder, and no sandbox can see it):
// what it says of a folder whose change time is the same is believed without a look inside.
TEST_CASE("what a search record says of an unchanged folder is believed, of a changed one not") {
    Workspace ws;
    TempDir dir;
    const std::string state = dir.path();
    make_old_tree(ws);
    SearchRecord record = recorded_start(ws, state);
    CHECK(record.folders.size() == 6061);
    // Neither folder is a repository; one of them changes after this.
    for (const char* folder : {"t2/o2", "t3/o3"}) record.git_dirs.push_back(ws / folder);
    rewrite_record(ws, state, record);
    ws.sh("mkdir t3/o3/sub");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::none, state);
    CHECK(has(policy.protected_paths, ws / "t2/o2/hooks"));
    CHECK_FALSE(has(policy.protected_paths, ws / "t3/o3/hooks"));
}

TEST_CASE(
    "a search record that others could have written is not read: the whole tree is searched") {
    Workspace ws;
    TempDir dir;
    const std::string state = dir.path();
    ws.sh("git init -q t4/o4/repo");
    make_old_tree(ws);
    // A record that leaves the repository out.
    SearchRecord record = recorded_start(ws, state);
    REQUIRE(has(record.git_dirs, ws / "t4/o4/repo/.git"));
    std::erase(record.git_dirs, ws / "t4/o4/repo/.git");
    const std::string file = search_record_file(state, {ws.root}, {}).path;
    auto forged_start = [&](const std::function<void()>& damage) {
        rewrite_record(ws, state, record);
        damage();
        SandboxPolicy policy = ws.policy();
        RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::none, state);
        return has(policy.protected_paths, ws / "t4/o4/repo/.git/hooks");
    };
    // As written, it is believed (which is why only the user may write it)...
    CHECK_FALSE(forged_start([] {}));
    // ... but not once a group or others may write it, or as a link to it.
    CHECK(forged_start([&] { ::chmod(file.c_str(), 0660); }));
    CHECK(forged_start([&] { ::chmod(file.c_str(), 0606); }));
    const std::string elsewhere = state + "/elsewhere";
    CHECK(forged_start([&] {
        REQUIRE(::rename(file.c_str(), elsewhere.c_str()) == 0);
        REQUIRE(::symlink(elsewhere.c_str(), file.c_str()) == 0);
    }));
    ::unlink(file.c_str());
    // Nor is a state folder inside a writable root that the sandbox does not hide used.
    Workspace inside_ws;
    inside_ws.sh("mkdir state && git init -q t4/o4/repo");
    make_old_tree(inside_ws);
    SandboxPolicy policy = inside_ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::none, inside_ws / "state");
    CHECK(has(policy.protected_paths, inside_ws / "t4/o4/repo/.git/hooks"));
    CHECK(fs::is_empty(inside_ws / "state"));
}

TEST_CASE("a small tree keeps no search record") {
    Workspace ws;
    TempDir dir;
    const std::string state = dir.path();
    ws.sh("mkdir -p a/b c && git init -q c/repo");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::none, state);
    CHECK(has(policy.protected_paths, ws / "c/repo/.git/hooks"));
    CHECK(records_in(state).empty());
}

namespace {

// The list as "kind path [<- from]" lines relative to `ws`, sorted.
std::vector<std::string> change_lines(const ChangeList& list, const Workspace& ws) {
    std::vector<std::string> out;
    auto rel = [&](const std::string& path) { return path.substr(ws.root.size() + 1); };
    for (const auto& c : list.kept)
        out.push_back(std::string(to_string(c.kind)) + " " + rel(c.path) + (c.folder ? "/" : "") +
                      (c.from.empty() ? "" : " <- " + rel(c.from)));
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("what commands change is recorded from begin_changes() to end_changes()") {
    Workspace ws;
    ws.sh("printf c > c.txt && printf d > d.txt && mkdir keep && printf k > keep/k");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes);
    CHECK(watch.check().empty());
    ws.sh("printf x > before.txt");  // before the command: not its change

    watch.begin_changes();
    ws.sh(
        "printf a > a.txt && printf b > b.txt && rm c.txt && mv d.txt e.txt && "
        "printf m >> keep/k && mkdir -p out/deep && printf 1 > out/deep/f && "
        "printf t > tmp && rm tmp");
    watch.check();
    auto changed = watch.end_changes();
    REQUIRE(changed);
    CHECK(changed->incomplete.empty());
    CHECK(changed->count == 8);
    CHECK(change_lines(*changed, ws) ==
          std::vector<std::string>{"created a.txt", "created b.txt", "created out/",
                                   "created out/deep/", "created out/deep/f", "deleted c.txt",
                                   "modified keep/k", "renamed e.txt <- d.txt"});

    // The next command changes nothing; what lands after a command's end is not its change.
    ws.sh("printf late > late.txt");
    watch.check();
    watch.begin_changes();
    ws.sh("cat a.txt keep/k");
    watch.check();
    changed = watch.end_changes();
    REQUIRE(changed);
    CHECK(changed->count == 0);
    CHECK(changed->incomplete.empty());

    // A folder made during the last command has a watch now: what is written in it counts.
    watch.begin_changes();
    ws.sh("printf 2 > out/deep/g && rm -r out/deep/f");
    watch.check();
    changed = watch.end_changes();
    REQUIRE(changed);
    CHECK(change_lines(*changed, ws) ==
          std::vector<std::string>{"created out/deep/g", "deleted out/deep/f"});
}

TEST_CASE("more files than the kernel queues events for are all counted") {
    Workspace ws;
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes);
    watch.check();
    watch.begin_changes();
    // 40,000 events, beyond fs.inotify.max_queued_events (16,384 by default), in batches
    // the reading thread has time for.
    for (int batch = 0; batch < 20; ++batch) {
        for (int i = 0; i < 1000; ++i)
            std::ofstream(ws / ("f" + std::to_string(batch * 1000 + i))) << "x";
        ::usleep(20000);
    }
    watch.check();
    auto changed = watch.end_changes();
    REQUIRE(changed);
    CHECK(changed->incomplete.empty());
    CHECK(changed->count == 20000);
    REQUIRE(changed->kept.size() == ChangeRecord::kKept);
    CHECK(changed->kept[0].path == ws / "f0");
}

TEST_CASE("without the change watch nothing is recorded; past the limits the list says so") {
    Workspace ws;
    {
        SandboxPolicy policy = ws.policy();
        RepositoryWatch watch(policy, {}, {});
        watch.begin_changes();
        ws.sh("touch a");
        watch.check();
        CHECK_FALSE(watch.end_changes());
    }
    ws.sh("mkdir -p $(seq -f 'd%g' 1 30)");
    const std::string said = with_limits(10, 0, [&] {
        SandboxPolicy policy = ws.policy();
        RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes);
        watch.check();
        watch.begin_changes();
        ws.sh("touch b");
        watch.check();
        auto changed = watch.end_changes();
        if (!changed) return std::string("nothing recorded");
        if (changed->incomplete.find("folders have no watch") == std::string::npos)
            return "incomplete: \"" + changed->incomplete + "\"";
        return std::string();
    });
    CHECK(said == "");
}

TEST_CASE("a `.git` made at a root's top is a command's change like one made below") {
    // No mount point is made there on the host any more: only a command makes one.
    Workspace ws;
    ws.sh("mkdir sub");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes);
    watch.check();
    watch.begin_changes();
    ws.sh("mkdir .git sub/.git");
    watch.check();
    auto changed = watch.end_changes();
    REQUIRE(changed);
    CHECK(change_lines(*changed, ws) ==
          std::vector<std::string>{"created .git/", "created sub/.git/"});
}

TEST_CASE("what the check itself makes for a new repository is no command's change") {
    Workspace ws;
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes);
    watch.check();
    watch.begin_changes();
    ws.sh("git init -q repo && printf x > repo/a");
    auto findings = watch.check();
    REQUIRE(found(findings, Kind::protected_repository, ws / "repo/.git"));
    // Nothing of the protection is made on the host: no empty editor folders.
    CHECK_FALSE(fs::exists(ws / "repo/.vscode"));
    auto changed = watch.end_changes();
    REQUIRE(changed);
    const std::vector<std::string> lines = change_lines(*changed, ws);
    CHECK(has(lines, "created repo/a"));
    CHECK(has(lines, "created repo/.git/HEAD"));
    for (const char* made : {"repo/.vscode/", "repo/.idea/", "repo/.claude/"})
        CHECK_FALSE(has(lines, std::string("created ") + made));
}

TEST_CASE("a folder removed and made again during a command is listed: what is in it is new") {
    Workspace ws;
    ws.sh(
        "mkdir -p build/stage && printf old > build/stage/app && printf old > app && "
        "git init -q && git add app && git -c user.name=u -c user.email=u@u commit -qm i");
    SandboxPolicy policy = ws.policy();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes);
    watch.check();
    watch.begin_changes();
    ws.sh(
        "rm -rf build app && printf new > app && mkdir -p build/stage && cp app build/stage && "
        "git status --short");
    watch.check();
    auto changed = watch.end_changes();
    REQUIRE(changed);
    CHECK(change_lines(*changed, ws) ==
          std::vector<std::string>{"modified app", "modified build/", "modified build/stage/",
                                   "modified build/stage/app", "written .git/index"});
}

TEST_CASE("without inotify the offer's list says it cannot see, never that nothing changed") {
    Workspace ws;
    const std::string said = with_limits(
        1000, 1000,
        [&] {
            SandboxPolicy policy = ws.policy();
            RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes);
            watch.begin_changes();
            ws.sh("touch a");
            watch.check();
            auto changed = watch.end_changes();
            if (!changed) return std::string("nothing recorded");
            if (changed->incomplete.find("cannot be watched (inotify: ") == std::string::npos)
                return "incomplete: \"" + changed->incomplete + "\"";
            return std::string();
        },
        /*instances=*/0);
    CHECK(said == "");
}

TEST_CASE("a one-shot command records changes only in a tree of few folders, and says so") {
    Workspace ws;
    ws.sh("mkdir few");
    {
        SandboxPolicy policy = ws.policy();
        RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes_if_few);
        watch.begin_changes();
        ws.sh("touch few/a");
        watch.check();
        auto changed = watch.end_changes();
        REQUIRE(changed);
        CHECK(changed->incomplete.empty());
        CHECK(changed->count == 1);
    }
    // 16,400 folders, past kFewFolders: no watch is added at all.
    ws.sh(
        "for t in $(seq 0 163); do for o in $(seq 0 99); do echo t$t/o$o; done; done | "
        "xargs mkdir -p");
    SandboxPolicy policy = ws.policy();
    const size_t before = inotify_watches();
    RepositoryWatch watch(policy, {}, {}, RepositoryWatch::Watching::changes_if_few);
    watch.begin_changes();
    ws.sh("touch few/b && git init -q t0/o0/repo");
    // The repositories are still looked after, by the folders' change times.
    CHECK(found(watch.check(), Kind::protected_repository, ws / "t0/o0/repo/.git"));
    CHECK(inotify_watches() == before);
    auto changed = watch.end_changes();
    REQUIRE(changed);
    CHECK(changed->count == 0);
    CHECK_THAT(changed->incomplete,
               Catch::Contains("watches at most 16384 folders, and the writable folders hold"));
}
