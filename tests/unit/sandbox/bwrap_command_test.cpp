#include "sandbox/bwrap_command.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "sandbox/path_names.h"
#include "sandbox/protection/host_run_paths.h"
#include "tests/unit/sandbox/bwrap_args.h"
#include "tests/unit/sandbox/fake_host_fs.h"

using namespace caretz;

namespace {

bool mentions(const Args& args, const std::string& path) {
    return std::find(args.begin(), args.end(), path) != args.end();
}

// Where folder `dir`, which the arguments make, becomes read-only: the index of the remount of
// its own tmpfs or, when it is a plain folder made in another one (`--dir`), of the tmpfs (or
// root) it lies in. -1 when no remount follows, or when something new is still made inside
// `dir` after it (a mount on a path that was not there before: that would not be read-only).
long read_only_from(const Args& args, const std::string& dir) {
    std::string mount = dir;
    while (mount != "/" && find_seq(args, {"--dir", mount}) >= 0) mount = parent_of(mount);
    if (mount != "/" && find_seq(args, {"--tmpfs", mount}) < 0) return -1;
    const long remount = find_seq(args, {"--remount-ro", mount});
    if (remount < 0) return -1;
    const auto before = args.begin() + remount;
    for (size_t i = static_cast<size_t>(remount) + 2; i < args.size(); ++i)
        if (args[i - 1] != "--chdir" && path_within(args[i], dir) &&
            std::find(args.begin(), before, args[i]) == before)
            return -1;
    return remount;
}

FakeHostFs typical_host() {
    return FakeHostFs({{"/bin", "l:usr/bin"},
                       {"/etc", "d"},
                       {"/home", "d"},
                       {"/home/u", "d"},
                       {"/home/u/.bashrc", "f"},
                       {"/home/u/.ssh", "d"},
                       {"/home/u/.aws", "d"},
                       {"/home/u/proj", "d"},
                       {"/home/u/proj/.git", "d"},
                       {"/home/u/proj/.git/HEAD", "f"},
                       {"/home/u/proj/.git/hooks", "d"},
                       {"/home/u/proj/.git/config", "f"},
                       {"/home/u/src", "d"},
                       {"/home/u/src/deep", "d"},
                       {"/proc", "d"},
                       {"/dev", "d"},
                       {"/run", "d"},
                       {"/run/docker.sock", "s"},
                       {"/tmp", "d"},
                       {"/usr", "d"},
                       {"/var", "d"},
                       {"/var/run", "l:/run"}});
}

SandboxPolicy policy_for(const std::string& workspace, PolicySettings settings = {}) {
    return make_policy(settings, "/home/u", workspace, {});
}

}  // namespace

TEST_CASE("the sandbox gets its own namespaces, session and no way back to privileges") {
    FakeHostFs host = typical_host();
    Args args = bwrap_arguments(policy_for("/home/u/proj"), host, "/home/u/proj");
    for (const char* flag :
         {"--die-with-parent", "--new-session", "--unshare-user", "--disable-userns",
          "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts"})
        CHECK(mentions(args, flag));
    CHECK(find_seq(args, {"--cap-drop", "ALL"}) >= 0);
    CHECK(find_seq(args, {"--chdir", "/home/u/proj"}) >= 0);
    CHECK(find_seq(args, {"--proc", "/proc"}) >= 0);
    CHECK(find_seq(args, {"--dev", "/dev"}) >= 0);
    CHECK(find_seq(args, {"--tmpfs", "/tmp"}) >= 0);
    // The root is remounted read-only after every mount, so nothing new appears in it.
    CHECK(find_seq(args, {"--remount-ro", "/"}) == static_cast<long>(args.size()) - 4);
}

TEST_CASE("the host is read-only and hidden paths are not mounted at all") {
    FakeHostFs host = typical_host();
    Args args = bwrap_arguments(policy_for("/home/u/proj"), host, "/home/u/proj");
    CHECK(find_seq(args, {"--ro-bind-try", "/etc", "/etc"}) >= 0);
    CHECK(find_seq(args, {"--ro-bind-try", "/usr", "/usr"}) >= 0);
    CHECK(find_seq(args, {"--symlink", "usr/bin", "/bin"}) >= 0);
    CHECK(find_seq(args, {"--symlink", "/run", "/var/run"}) < 0);  // /var is bound whole
    CHECK(find_seq(args, {"--ro-bind-try", "/var", "/var"}) >= 0);
    CHECK_FALSE(mentions(args, "/run"));
    CHECK_FALSE(mentions(args, "/run/docker.sock"));
    CHECK_FALSE(mentions(args, "/home/u/.ssh"));
    CHECK_FALSE(mentions(args, "/home/u/.aws"));
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/.bashrc", "/home/u/.bashrc"}) >= 0);
}

TEST_CASE("every folder that is rebuilt is made read-only after its entries") {
    FakeHostFs host = typical_host();
    Args args = bwrap_arguments(policy_for("/home/u/proj"), host, "/home/u/proj");
    long made = find_seq(args, {"--dir", "/home/u"});
    REQUIRE(made >= 0);
    long bashrc = find_seq(args, {"--ro-bind-try", "/home/u/.bashrc", "/home/u/.bashrc"});
    CHECK(made < bashrc);
    CHECK(bashrc < read_only_from(args, "/home/u"));
    // Below a writable root too (sealed folders), and in a workspace at home, rebuilt itself.
    for (const std::string workspace : {"/home/u/proj", "/home/u"}) {
        SandboxPolicy policy = policy_for(workspace);
        policy.sealed = {"/home/u/proj/.git", "/home/u/src"};
        args = bwrap_arguments(policy, host, workspace);
        for (size_t i = 0; i + 1 < args.size(); ++i)
            if ((args[i] == "--tmpfs" && args[i + 1] != "/tmp" && args[i + 1] != kRuntimeDir) ||
                args[i] == "--dir") {
                INFO(workspace << ": " << args[i] << " " << args[i + 1]);
                CHECK(read_only_from(args, args[i + 1]) > static_cast<long>(i));
            }
    }
}

TEST_CASE("a folder rebuilt inside a rebuilt one is a folder of its tmpfs, not a mount") {
    // Each mount costs bwrap a pass over the mount table; the root's own remount, last, makes
    // /home and the home folder read-only with it.
    FakeHostFs host = typical_host();
    Args args = bwrap_arguments(policy_for("/home/u/proj"), host, "/home/u/proj");
    CHECK(find_seq(args, {"--dir", "/home"}) >= 0);
    CHECK(find_seq(args, {"--dir", "/home/u"}) >= 0);
    for (const char* dir : {"/home", "/home/u"}) {
        CHECK(find_seq(args, {"--tmpfs", dir}) < 0);
        CHECK(find_seq(args, {"--remount-ro", dir}) < 0);
        CHECK(read_only_from(args, dir) == find_seq(args, {"--remount-ro", "/"}));
    }
}

TEST_CASE("files made in the root come after its entries and are read-only with it") {
    FakeHostFs host({{"/etc", "d"}, {"/home", "d"}, {"/tmp", "d"}, {kHookDir, "d"}});
    const std::string bashrc = std::string(kHookDir) + "/bashrc";
    Args in_root = {"--dir", kHookDir, "--perms", "0444", "--file", "20", bashrc};
    Args args = bwrap_arguments(policy_for("/home"), host, "/home", nullptr, in_root);
    long made = find_seq(args, in_root);
    REQUIRE(made >= 0);
    CHECK(made > find_seq(args, {"--ro-bind-try", "/etc", "/etc"}));
    // A host folder of that name is not bound there: only Caretz's files are in it.
    CHECK(find_seq(args, {"--ro-bind-try", kHookDir, kHookDir}) < 0);
    CHECK(read_only_from(args, kHookDir) == find_seq(args, {"--remount-ro", "/"}));
    CHECK(read_only_from(args, kHookDir) > made);
}

TEST_CASE("Caretz's own files inside stay private even when /tmp is the host's") {
    FakeHostFs host = typical_host();
    Args args = bwrap_arguments(policy_for("/tmp"), host, "/tmp");
    long host_tmp = find_seq(args, {"--bind", "/tmp", "/tmp"});
    long runtime = find_seq(args, {"--tmpfs", kRuntimeDir});
    CHECK(host_tmp >= 0);
    CHECK(runtime > host_tmp);
    CHECK(std::string(kRuntimeDir).rfind("/tmp/", 0) == std::string::npos);
}

TEST_CASE("the workspace is writable and its git hooks and config stay read-only") {
    FakeHostFs host = typical_host();
    Args args = bwrap_arguments(policy_for("/home/u/proj"), host, "/home/u/proj");
    long workspace = find_seq(args, {"--bind-try", "/home/u/proj", "/home/u/proj"});
    REQUIRE(workspace >= 0);
    CHECK(find_seq(args, {"--bind", "/home/u/proj", "/home/u/proj"}) < 0);
    long hooks =
        find_seq(args, {"--ro-bind", "/home/u/proj/.git/hooks", "/home/u/proj/.git/hooks"});
    long config =
        find_seq(args, {"--ro-bind", "/home/u/proj/.git/config", "/home/u/proj/.git/config"});
    CHECK(hooks > workspace);
    CHECK(config > workspace);
    CHECK_FALSE(mentions(args, "/home/u/proj/.caretz"));  // missing on the host: nothing to bind
}

TEST_CASE("a workspace that is no repository gets no .git, nor any mount point on the host") {
    // A mount point on the host would be an empty `.git` there, which `go build` and other
    // tools take for a broken repository; a repository `git init` makes is the watch's.
    FakeHostFs host({{"/home", "d"}, {"/home/u", "d"}, {"/home/u/w", "d"}});
    Args args = bwrap_arguments(policy_for("/home/u/w"), host, "/home/u/w");
    CHECK_FALSE(mentions(args, "/home/u/w/.git"));
}

TEST_CASE("a workspace below a read-only folder is bound writable on top of it") {
    FakeHostFs host = typical_host();
    Args args = bwrap_arguments(policy_for("/home/u/src/deep"), host, "/home/u/src/deep");
    long src = find_seq(args, {"--ro-bind-try", "/home/u/src", "/home/u/src"});
    long deep = find_seq(args, {"--bind", "/home/u/src/deep", "/home/u/src/deep"});
    REQUIRE(src >= 0);
    CHECK(deep > src);
}

TEST_CASE("a workspace at home keeps the hidden paths hidden and home's own top read-only") {
    FakeHostFs host = typical_host();
    Args args = bwrap_arguments(policy_for("/home/u"), host, "/home/u");
    CHECK(find_seq(args, {"--bind-try", "/home/u/.bashrc", "/home/u/.bashrc"}) >= 0);
    CHECK(find_seq(args, {"--bind-try", "/home/u/proj", "/home/u/proj"}) >= 0);
    CHECK(read_only_from(args, "/home/u") >= 0);
    CHECK_FALSE(mentions(args, "/home/u/.ssh"));
    CHECK(find_seq(args, {"--bind", "/home/u", "/home/u"}) < 0);
}

TEST_CASE("configured writable roots and hidden paths join the defaults") {
    FakeHostFs host = typical_host();
    PolicySettings settings;
    settings.writable = {"/etc"};
    settings.hidden = {"~/src"};
    Args args = bwrap_arguments(policy_for("/home/u/proj", settings), host, "/home/u/proj");
    CHECK(find_seq(args, {"--bind-try", "/etc", "/etc"}) >= 0);
    CHECK_FALSE(mentions(args, "/home/u/src"));
}

TEST_CASE("plan mode binds nothing writable") {
    FakeHostFs host = typical_host();
    PolicySettings settings;
    settings.read_only = true;
    Args args = bwrap_arguments(policy_for("/home/u/proj", settings), host, "/home/u/proj");
    CHECK_FALSE(mentions(args, "--bind"));
    CHECK_FALSE(mentions(args, "--bind-try"));
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/proj", "/home/u/proj"}) >= 0);
}

TEST_CASE("--allow-docker binds the host's Docker socket in") {
    FakeHostFs host = typical_host();
    PolicySettings settings;
    settings.allow_docker = true;
    auto policy = make_policy(settings, "/home/u", "/home/u/proj",
                              {{"DOCKER_HOST", "unix:///run/docker.sock"}});
    Args args = bwrap_arguments(policy, host, "/home/u/proj");
    CHECK(find_seq(args, {"--bind", "/run/docker.sock", "/run/docker.sock"}) >= 0);
}

TEST_CASE("a private folder is a writable tmpfs with the shell's own files copied in") {
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.config", "d"},
                     {"/home/u/.config/fish", "d"},
                     {"/home/u/.config/fish/config.fish", "f"},
                     {"/home/u/.config/fish/fish_variables", "f"},
                     {"/home/u/.config/fish/fish_plugins", "f"},
                     {"/home/u/.config/fish/functions", "d"},
                     {"/home/u/proj", "d"},
                     {"/tmp", "d"}});
    SandboxPolicy policy = policy_for("/home/u/proj");
    policy.private_dirs = {{"/home/u/.config/fish",
                            {"fish_variables"},
                            {"config.fish", "conf.d", "functions", "completions"}}};
    std::vector<std::string> copied;
    Args args = bwrap_arguments(policy, host, "/home/u/proj", &copied);
    // Only the shell's own files are copies it may write.
    CHECK(copied == std::vector<std::string>{"/home/u/.config/fish/fish_variables"});
    long tmpfs = find_seq(args, {"--tmpfs", "/home/u/.config/fish"});
    REQUIRE(tmpfs >= 0);
    CHECK(find_seq(args, {"--file", std::to_string(kFirstCopiedFileFd),
                          "/home/u/.config/fish/fish_variables"}) > tmpfs);
    // What the shell runs from there, and the rest, come back read-only: a command cannot
    // change what the next shell of the session runs.
    for (const std::string& path : {std::string("/home/u/.config/fish/config.fish"),
                                    std::string("/home/u/.config/fish/functions"),
                                    std::string("/home/u/.config/fish/fish_plugins")})
        CHECK(find_seq(args, {"--ro-bind-try", path, path}) > tmpfs);
    // ... also where it is missing: an empty read-only folder holds its place.
    for (const std::string& path : {std::string("/home/u/.config/fish/conf.d"),
                                    std::string("/home/u/.config/fish/completions")})
        CHECK(find_seq(args, {"--tmpfs", path, "--remount-ro", path}) > tmpfs);
    CHECK(find_seq(args, {"--tmpfs", "/home/u/.config/fish/functions"}) < 0);
    // Nothing remounts the folder itself read-only: the shell may write its own files there.
    CHECK(find_seq(args, {"--remount-ro", "/home/u/.config/fish"}) < 0);
    // It comes after the home is bound read-only, so it lies on top.
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u", "/home/u"}) < tmpfs);
}

TEST_CASE("a private folder's config that is a link cannot be made anew, nor show a hidden path") {
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.config", "d"},
                     {"/home/u/.config/fish", "d"},
                     {"/home/u/.config/fish/config.fish", "l:/home/u/dotfiles/config.fish"},
                     {"/home/u/.config/fish/conf.d", "l:/home/u/secret"},
                     {"/home/u/.config/fish/functions", "d"},
                     {"/home/u/dotfiles", "d"},
                     {"/home/u/dotfiles/config.fish", "f"},
                     {"/home/u/secret", "d"},
                     {"/home/u/proj", "d"},
                     {"/tmp", "d"}});
    PolicySettings settings;
    settings.hidden = {"/home/u/secret"};
    SandboxPolicy policy = policy_for("/home/u/proj", settings);
    policy.private_dirs = {
        {"/home/u/.config/fish", {"fish_variables"}, {"config.fish", "conf.d", "functions"}}};
    std::vector<std::string> copied;
    Args args = bwrap_arguments(policy, host, "/home/u/proj", &copied);
    const std::string dir = "/home/u/.config/fish";
    // A link the shell runs from is bound (what it leads to, read-only): a link in the tmpfs
    // could be removed and replaced by a file of the command's.
    CHECK(find_seq(args, {"--ro-bind-try", dir + "/config.fish", dir + "/config.fish"}) >= 0);
    CHECK(find_seq(args, {"--symlink", "/home/u/dotfiles/config.fish", dir + "/config.fish"}) < 0);
    // One that leads to a hidden path shows nothing of it, and stays empty.
    CHECK(find_seq(args, {"--tmpfs", dir + "/conf.d", "--remount-ro", dir + "/conf.d"}) >= 0);
    CHECK(find_seq(args, {"--ro-bind-try", dir + "/conf.d", dir + "/conf.d"}) < 0);
    CHECK(find_seq(args, {"--ro-bind-try", dir + "/functions", dir + "/functions"}) >= 0);
}

TEST_CASE("a private folder that is writable already, hidden or missing is left alone") {
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.config", "d"},
                     {"/home/u/.config/fish", "d"},
                     {"/home/u/.config/fish/config.fish", "f"},
                     {"/tmp", "d"}});
    for (const std::string& dir :
         {std::string("/home/u/.config/fish"), std::string("/home/u/none")}) {
        SandboxPolicy policy = policy_for("/home/u");  // the whole home is writable
        policy.private_dirs = {{dir, {"fish_variables"}, {"config.fish"}}};
        std::vector<std::string> copied;
        Args args = bwrap_arguments(policy, host, "/home/u", &copied);
        CHECK(copied.empty());
        CHECK(find_seq(args, {"--tmpfs", dir}) < 0);
    }
    PolicySettings hidden;
    hidden.hidden = {"/home/u/.config/fish"};
    SandboxPolicy policy = policy_for("/tmp", hidden);
    policy.private_dirs = {{"/home/u/.config/fish", {"fish_variables"}, {"config.fish"}}};
    std::vector<std::string> copied;
    Args args = bwrap_arguments(policy, host, "/tmp", &copied);
    CHECK(copied.empty());
    CHECK(find_seq(args, {"--tmpfs", "/home/u/.config/fish"}) < 0);
}

TEST_CASE("a hidden file looks missing while the rest of its folder stays, read-only") {
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.netrc", "f"},
                     {"/home/u/.docker", "d"},
                     {"/home/u/.docker/config.json", "f"},
                     {"/home/u/.docker/contexts", "d"},
                     {"/home/u/.docker/daemon.json", "f"},
                     {"/home/u/.kube", "d"},
                     {"/home/u/.kube/config", "f"},
                     {"/home/u/proj", "d"},
                     {"/home/u/proj/.git", "d"}});
    Args args = bwrap_arguments(policy_for("/home/u/proj"), host, "/home/u/proj");
    CHECK_FALSE(mentions(args, "/home/u/.netrc"));
    CHECK_FALSE(mentions(args, "/home/u/.docker/config.json"));
    CHECK_FALSE(mentions(args, "/home/u/.kube"));
    CHECK_FALSE(mentions(args, "/home/u/.kube/config"));
    // The folder is rebuilt: an empty one, its other entries bound back, then made read-only,
    // so the hidden file cannot be created anew in a tmpfs that would swallow it.
    long made = find_seq(args, {"--dir", "/home/u/.docker"});
    long contexts =
        find_seq(args, {"--ro-bind-try", "/home/u/.docker/contexts", "/home/u/.docker/contexts"});
    long daemon = find_seq(
        args, {"--ro-bind-try", "/home/u/.docker/daemon.json", "/home/u/.docker/daemon.json"});
    long remount = read_only_from(args, "/home/u/.docker");
    REQUIRE(made >= 0);
    CHECK(made < contexts);
    CHECK(made < daemon);
    CHECK(contexts < remount);
    CHECK(daemon < remount);
}

TEST_CASE("a credential store given back by sandbox.visible is bound like any other path") {
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.netrc", "f"},
                     {"/home/u/.kube", "d"},
                     {"/home/u/proj", "d"},
                     {"/home/u/proj/.git", "d"}});
    PolicySettings settings;
    settings.visible = {"~/.kube"};
    Args args = bwrap_arguments(policy_for("/home/u/proj", settings), host, "/home/u/proj");
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/.kube", "/home/u/.kube"}) >= 0);
    CHECK_FALSE(mentions(args, "/home/u/.netrc"));
}

TEST_CASE("a workspace rebuilt around a hidden file gets no empty .git mounted over it") {
    // ~/.docker is rebuilt to hide config.json; its top is read-only already, so `git init`
    // fails there, and a tmpfs at ~/.docker/.git could not be made in it.
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.docker", "d"},
                     {"/home/u/.docker/config.json", "f"},
                     {"/home/u/.docker/contexts", "d"}});
    Args args = bwrap_arguments(policy_for("/home/u/.docker"), host, "/home/u/.docker");
    CHECK_FALSE(mentions(args, "/home/u/.docker/.git"));
    CHECK(find_seq(args, {"--bind-try", "/home/u/.docker/contexts", "/home/u/.docker/contexts"}) >=
          0);
    CHECK(read_only_from(args, "/home/u/.docker") >= 0);
    CHECK_FALSE(mentions(args, "/home/u/.docker/config.json"));
}

TEST_CASE("a writable root inside a hidden path stays hidden") {
    FakeHostFs host = typical_host();
    PolicySettings settings;
    settings.writable = {"~/.aws"};
    Args args = bwrap_arguments(policy_for("/home/u/proj", settings), host, "/home/u/proj");
    CHECK_FALSE(mentions(args, "/home/u/.aws"));
}

TEST_CASE("every watched program of the host is covered by the stand-in, the real one kept aside") {
    FakeHostFs host({{"/usr", "d"},
                     {"/usr/bin", "d"},
                     {"/usr/bin/sudo", "f"},
                     {"/usr/local/bin/sudo", "l:/usr/bin/sudo"},  // the same sudo: once
                     {"/usr/local/sbin/sudo", "l:/opt/secret/sudo"},
                     {"/opt/secret/sudo", "f"},
                     {"/usr/sbin/sudo", "d"},  // not a program
                     {"/usr/bin/kubectl", "l:/usr/lib/sdk/bin/kubectl"},
                     {"/usr/lib/sdk/bin/kubectl", "f"},
                     {"/home/u/bin/git", "f"},         // on the user's $PATH only
                     {"/home/u/proj/bin/git", "f"}});  // in the workspace: left alone
    PolicySettings settings;
    settings.hidden = {"/opt/secret"};
    const WatchedPrograms programs{{"sudo", "kubectl", "git", "helm"},
                                   path_folders("/home/u/bin:bin:/home/u/proj/bin::/usr/bin")};
    Args args = run_watch_arguments(policy_for("/home/u/proj", settings), host, programs,
                                    "/proc/self/fd/5", "/run/user/1/records");
    CHECK(args == Args{"--bind",
                       "/run/user/1/records",
                       "/.caretz/runs",
                       "--ro-bind",
                       "/usr/bin/sudo",
                       "/.caretz/real/sudo/usr/bin/sudo",
                       "--ro-bind",
                       "/proc/self/fd/5",
                       "/usr/bin/sudo",
                       "--ro-bind",
                       "/usr/lib/sdk/bin/kubectl",
                       "/.caretz/real/kubectl/usr/lib/sdk/bin/kubectl",
                       "--ro-bind",
                       "/proc/self/fd/5",
                       "/usr/lib/sdk/bin/kubectl",
                       "--ro-bind",
                       "/home/u/bin/git",
                       "/.caretz/real/git/home/u/bin/git",
                       "--ro-bind",
                       "/proc/self/fd/5",
                       "/home/u/bin/git"});
}

TEST_CASE("only the absolute folders of $PATH are searched") {
    CHECK(path_folders("/a/b/:c::/d/../e:") == std::vector<std::string>{"/a/b", "/e"});
    CHECK(path_folders("").empty());
}

TEST_CASE("a host without watched programs gets no stand-in, only the records file") {
    FakeHostFs host(std::map<std::string, std::string>{{"/usr", "d"}});
    Args args = run_watch_arguments(policy_for("/home/u/proj"), host, {{"sudo", "git"}, {}},
                                    "/proc/self/fd/5", "/r");
    CHECK(args == Args{"--bind", "/r", "/.caretz/runs"});
}

TEST_CASE("a sealed folder in a writable root is rebuilt on top of the root's bind") {
    FakeHostFs host = typical_host();
    SandboxPolicy policy = policy_for("/home/u/proj");
    policy.sealed = {"/home/u/proj/.git"};
    Args args = bwrap_arguments(policy, host, "/home/u/proj");
    // (The home is rebuilt around ~/.ssh, so the workspace is an entry bound back into it.)
    long root = find_seq(args, {"--bind-try", "/home/u/proj", "/home/u/proj"});
    long tmpfs = find_seq(args, {"--tmpfs", "/home/u/proj/.git"});
    long entry = find_seq(args, {"--bind-try", "/home/u/proj/.git/HEAD", "/home/u/proj/.git/HEAD"});
    long sealed = find_seq(args, {"--remount-ro", "/home/u/proj/.git"});
    REQUIRE(root >= 0);
    CHECK(root < tmpfs);
    CHECK(tmpfs < entry);
    CHECK(entry < sealed);
    // The hooks, protected, come back read-only into the rebuilt folder, not writable.
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/proj/.git/hooks", "/home/u/proj/.git/hooks"}) >
          tmpfs);
    CHECK(find_seq(args, {"--bind-try", "/home/u/proj/.git/hooks", "/home/u/proj/.git/hooks"}) < 0);
}

TEST_CASE("a folder held in place is never bound from the host over a rebuilt one") {
    // The home is the workspace; ~/.config holds a hidden path, so it is rebuilt without it, and
    // ~/.config/git/config, protected, lies below it. Binding the host's ~/.config to hold it in
    // place would show ~/.config/caretz again.
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.config", "d"},
                     {"/home/u/.config/caretz", "d"},
                     {"/home/u/.config/git", "d"},
                     {"/home/u/.config/git/config", "f"},
                     {"/tmp", "d"}});
    SandboxPolicy policy = policy_for("/home/u");
    policy.protected_paths.push_back("/home/u/.config/git/config");
    Args args = bwrap_arguments(policy, host, "/home/u");
    CHECK(find_seq(args, {"--dir", "/home/u/.config"}) >= 0);
    CHECK(read_only_from(args, "/home/u/.config") >= 0);
    CHECK_FALSE(mentions(args, "/home/u/.config/caretz"));
    CHECK(find_seq(args, {"--bind", "/home/u/.config", "/home/u/.config"}) < 0);
    CHECK(find_seq(args, {"--bind", "/home/u/.config/git", "/home/u/.config/git"}) < 0);
    CHECK(find_seq(args,
                   {"--ro-bind", "/home/u/.config/git/config", "/home/u/.config/git/config"}) >= 0);
}

TEST_CASE("a shell's folder protected in a writable root gets its private copy, not a bind") {
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.config", "d"},
                     {"/home/u/.config/fish", "d"},
                     {"/home/u/.config/fish/config.fish", "f"},
                     {"/home/u/.config/fish/fish_variables", "f"},
                     {"/tmp", "d"}});
    SandboxPolicy policy = policy_for("/home/u");
    policy.protected_paths.push_back("/home/u/.config/fish");
    policy.private_dirs = {{"/home/u/.config/fish", {"fish_variables"}, {"config.fish"}}};
    std::vector<std::string> copied;
    Args args = bwrap_arguments(policy, host, "/home/u", &copied);
    CHECK(copied == std::vector<std::string>{"/home/u/.config/fish/fish_variables"});
    CHECK(find_seq(args, {"--tmpfs", "/home/u/.config/fish"}) >= 0);
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/.config/fish/config.fish",
                          "/home/u/.config/fish/config.fish"}) >= 0);
    CHECK(find_seq(args, {"--ro-bind", "/home/u/.config/fish", "/home/u/.config/fish"}) < 0);
}

TEST_CASE("in the home workspace, dot entries come back read-only, the user's own writable") {
    FakeHostFs host({{"/home", "d"},
                     {"/home/u", "d"},
                     {"/home/u/.ssh", "d"},
                     {"/home/u/.inputrc", "f"},
                     {"/home/u/.cache", "d"},
                     {"/home/u/.cache/pip", "d"},
                     {"/home/u/.config", "d"},
                     {"/home/u/.config/caretz", "d"},
                     {"/home/u/.config/i3", "d"},
                     {"/home/u/proj", "d"}});
    PolicySettings settings;
    settings.writable = {"/home/u/.cache/pip"};
    SandboxPolicy policy = policy_for("/home/u", settings);
    protect_home_configuration(policy, host);
    Args args = bwrap_arguments(policy, host, "/home/u");
    CHECK(find_seq(args, {"--bind-try", "/home/u/proj", "/home/u/proj"}) >= 0);
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/.inputrc", "/home/u/.inputrc"}) >= 0);
    CHECK(find_seq(args, {"--bind-try", "/home/u/.inputrc", "/home/u/.inputrc"}) < 0);
    // ~/.config is rebuilt to hide Caretz's config: its entries come back read-only, and it is
    // not bound whole over that.
    CHECK(find_seq(args, {"--ro-bind-try", "/home/u/.config/i3", "/home/u/.config/i3"}) >= 0);
    CHECK(find_seq(args, {"--ro-bind", "/home/u/.config", "/home/u/.config"}) < 0);
    // A writable root inside a dot entry comes back writable on top of it.
    const long cache = find_seq(args, {"--ro-bind-try", "/home/u/.cache", "/home/u/.cache"});
    const long pip = find_seq(args, {"--bind", "/home/u/.cache/pip", "/home/u/.cache/pip"});
    REQUIRE(cache >= 0);
    CHECK(pip > cache);
    CHECK(read_only_from(args, "/home/u") >= 0);
}
