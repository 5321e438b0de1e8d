#include "escalation/refusal_detector.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "escalation/output_lines.h"
#include "sandbox/protection/host_run_paths.h"
#include "tests/unit/escalation/fake_host.h"
#include "tests/unit/sandbox/fake_host_fs.h"

using namespace caretz;
using caretz::testing::FakeHost;
using caretz::testing::test_policy;

namespace {

// One command's situation, with a host where the usual sockets exist and the user may write
// everywhere (as root may), so that a test is about what the output says; the tests of what the
// host refuses too clear `host.writable`.
struct Scene {
    SandboxPolicy policy = test_policy();
    FakeHost host;

    Scene() {
        host.sockets = {"/var/run/docker.sock", "/run/dbus/system_bus_socket"};
        host.paths = {"/run/user/1001/bus", "/home/cztest/.ssh/id_ed25519"};
        host.writable = {"/"};
    }

    DetectionContext context(const std::string& command, int exit_code,
                             const std::string& cwd = "/home/cztest/work") const {
        return DetectionContext{
            .command = command, .exit_code = exit_code, .cwd = cwd, .policy = policy, .host = host};
    }

    std::vector<Refusal> detect(const std::string& command, int exit_code,
                                const std::string& output,
                                const std::string& cwd = "/home/cztest/work") const {
        return detect_refusals(context(command, exit_code, cwd), output);
    }
};

std::vector<std::string> subjects(const std::vector<Refusal>& refusals) {
    std::vector<std::string> result;
    for (const auto& r : refusals)
        result.push_back(std::string(to_string(r.kind)) + " " + r.subject);
    return result;
}

using Subjects = std::vector<std::string>;

}  // namespace

TEST_CASE("to_string names every kind", "[refusal_detector]") {
    CHECK(to_string(RefusalKind::write) == "write");
    CHECK(to_string(RefusalKind::hidden) == "hidden");
    CHECK(to_string(RefusalKind::sudo) == "sudo");
    CHECK(to_string(RefusalKind::docker) == "docker");
    CHECK(to_string(RefusalKind::bus) == "bus");
}

TEST_CASE("A refusal carries the evidence line, trimmed", "[refusal_detector]") {
    const Scene scene;
    const auto refusals = scene.detect(
        "touch /etc/x", 1, "  touch: cannot touch '/etc/x': Read-only file system \t\n");
    REQUIRE(refusals.size() == 1);
    CHECK(refusals[0] == Refusal{RefusalKind::write, "/etc/x",
                                 "touch: cannot touch '/etc/x': Read-only file system"});
}

TEST_CASE("Evidence is cut to 300 bytes without splitting a character", "[refusal_detector]") {
    const Scene scene;
    const std::string path = "/etc/" + std::string(294, 'a') + "\xc3\xa9" + "tc";
    const auto refusals = scene.detect("touch", 1, "bash: " + path + ": Read-only file system\n");
    REQUIRE(refusals.size() == 1);
    CHECK(refusals[0].subject == path);
    CHECK(refusals[0].evidence == "bash: /etc/" + std::string(289, 'a'));
    CHECK(refusals[0].evidence.size() <= 300);
}

TEST_CASE("The same refusal counts once, with its first evidence", "[refusal_detector]") {
    const Scene scene;
    const auto refusals = scene.detect("cp a /etc/x; cp b /etc/x", 1,
                                       "cp: cannot create regular file '/etc/x': Read-only file "
                                       "system\nbash: line 1: /etc/x: Read-only file system\n");
    REQUIRE(refusals.size() == 1);
    CHECK(refusals[0].evidence == "cp: cannot create regular file '/etc/x': Read-only file system");
}

TEST_CASE("Refusals come in order of first appearance", "[refusal_detector]") {
    const Scene scene;
    const std::string output =
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon "
        "running?\n"
        "touch: cannot touch '/etc/x': Read-only file system\n"
        "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.\n"
        "Failed to connect to bus: No such file or directory\n"
        "cat: /home/cztest/.ssh/id_ed25519: No such file or directory\n"
        "touch: cannot touch '/etc/x': Read-only file system\n";
    CHECK(subjects(scene.detect("docker ps; touch /etc/x; sudo true; busctl; cat x", 1, output)) ==
          Subjects{"docker /var/run/docker.sock", "write /etc/x", "sudo sudo",
                   "bus /run/dbus/system_bus_socket", "hidden /home/cztest/.ssh/id_ed25519"});
}

TEST_CASE("sudo's clearest line becomes the evidence", "[refusal_detector]") {
    const Scene scene;
    const auto refusals = scene.detect(
        "sudo -n true", 1,
        "sudo: /etc/sudo.conf is owned by uid 65534, should be 0\n"
        "touch: cannot touch '/etc/x': Read-only file system\n"
        "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.\n");
    CHECK(subjects(refusals) == Subjects{"sudo sudo", "write /etc/x"});
    CHECK(refusals[0].evidence ==
          "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.");
}

TEST_CASE("Paths in messages resolve against the cwd and understand home forms",
          "[refusal_detector]") {
    const Scene scene;
    const auto one = [&scene](const std::string& line, const std::string& cwd) {
        return subjects(scene.detect("cmd", 1, line + "\n", cwd));
    };
    CHECK(one("bash: hosts: Read-only file system", "/etc") == Subjects{"write /etc/hosts"});
    CHECK(one("bash: ../etc/hosts: Read-only file system", "/usr") == Subjects{"write /etc/hosts"});
    CHECK(one("bash: ./x/../y: Read-only file system", "/etc") == Subjects{"write /etc/y"});
    CHECK(one("cp: cannot create regular file '~/bin/tool': Read-only file system", "/") ==
          Subjects{"write /home/cztest/bin/tool"});
    CHECK(one("zsh:1: read-only file system: $HOME/.bashrc", "/") ==
          Subjects{"write /home/cztest/.bashrc"});
    CHECK(one("zsh:1: read-only file system: ${HOME}/.profile", "/") ==
          Subjects{"write /home/cztest/.profile"});
    CHECK(one("cat: ~/.ssh/id_ed25519: No such file or directory", "/tmp") ==
          Subjects{"hidden /home/cztest/.ssh/id_ed25519"});
    CHECK(one("bash: $HOMEWORK/x: Read-only file system", "/etc") ==
          Subjects{"write /etc/$HOMEWORK/x"});
}

TEST_CASE("An empty cwd means the workspace", "[refusal_detector]") {
    const Scene scene;
    CHECK(subjects(scene.detect("cat ../.ssh/id_ed25519", 1,
                                "cat: ../.ssh/id_ed25519: No such file or directory\n", "")) ==
          Subjects{"hidden /home/cztest/.ssh/id_ed25519"});
}

TEST_CASE("Message formats of tools not installed where the cases were captured",
          "[refusal_detector]") {
    const Scene scene;
    const auto first = [&scene](const std::string& line) {
        const auto found = subjects(scene.detect("cmd", 1, line + "\n", "/etc"));
        return found.empty() ? std::string("none") : found.front();
    };
    // Go (docker, kubectl, terraform), Rust (cargo, ripgrep), older GNU quoting, git, Python
    CHECK(first("Error: open /etc/x.yaml: read-only file system") == "write /etc/x.yaml");
    CHECK(first("mkdir /etc/app: read-only file system") == "write /etc/app");
    CHECK(first("error: failed to write /etc/x: Read-only file system (os error 30)") ==
          "write /etc/x");
    CHECK(first("rg: /run/user/1001/bus: No such file or directory (os error 2)") ==
          "hidden /run/user/1001/bus");
    CHECK(first("touch: cannot touch `/etc/x': Read-only file system") == "write /etc/x");
    CHECK(first("error: could not lock config file /etc/gitconfig: Read-only file system") ==
          "write /etc/gitconfig");
    CHECK(first("fatal: Unable to create '/etc/.git/index.lock': Read-only file system") ==
          "write /etc/.git/index.lock");
    CHECK(first("error: unable to create file conf.d/site.conf: Read-only file system") ==
          "write /etc/conf.d/site.conf");
    CHECK(first("OSError: [Errno 30] Read-only file system: 'a' -> '/usr/local/a'") ==
          "write /etc/a");
    CHECK(first("OSError: [Errno 30] Read-only file system: \"/etc/it's\"") == "write /etc/it's");
    // git names what it makes bare, relative to where it works; ssh-keygen brackets the error
    CHECK(first("fatal: cannot mkdir newrepo: Read-only file system") == "write /etc/newrepo");
    CHECK(first("error: unable to create file README: Read-only file system") ==
          "write /etc/README");
    CHECK(first("Could not create directory '/etc/ssh' (Read-only file system).") ==
          "write /etc/ssh");
    CHECK(first("Could not create directory /etc/ssh (Read-only file system)") == "write /etc/ssh");
    CHECK(subjects(scene.detect("node save.js", 1,
                                "Error: EBUSY: resource busy or locked, rename '.git/config.lock' "
                                "-> '.git/config'\n")) ==
          Subjects{"write /home/cztest/work/.git/config"});
}

TEST_CASE("EPERM and EACCES count only where the host would allow the write",
          "[refusal_detector]") {
    Scene scene;
    scene.host.writable.clear();
    const std::string line = "chown: changing ownership of '/srv/data': Operation not permitted\n";
    CHECK(scene.detect("chown me /srv/data", 1, line).empty());
    scene.host.writable = {"/srv"};
    CHECK(subjects(scene.detect("chown me /srv/data", 1, line)) == Subjects{"write /srv/data"});
}

TEST_CASE("Words that are not paths never become subjects", "[refusal_detector]") {
    Scene scene;
    scene.host.writable = {"/"};
    scene.host.paths = {"/etc/connect", "/etc/socket", "/etc/failed"};
    for (const char* line : {
             "ping: socket: Operation not permitted",
             "dial unix /tmp/app.sock: connect: no such file or directory",
             "bind: Permission denied",
             "git@github.com: Permission denied (publickey).",
             "user@host: Permission denied, please try again.",
             "sysctl: permission denied on key \"net.ipv4.ip_forward\"",
             "nc: connect to 10.0.0.1 port 22 (tcp) failed: Permission denied",
             "kill: (1) - Operation not permitted",
             "date: cannot set date: Operation not permitted",
             "fatal: unable to access 'https://example.com/x.git/': Permission denied",
             "ERROR: Permission denied",
             "git@github.com (Permission denied).",
             "Could not create directory (Read-only file system).",
             "ssh: connect to host example.com port 22 (Permission denied)",
             "error: cannot lock ref: Read-only file system",
             ": Read-only file system",
         }) {
        INFO(line);
        CHECK(scene.detect("cmd", 1, std::string(line) + "\n", "/etc").empty());
    }
}

TEST_CASE("A path made in a hidden folder that exists on the host is hidden",
          "[refusal_detector]") {
    Scene scene;  // ~/.ssh exists on the host, with a key in it
    const auto found = [&scene](const std::string& line, int exit_code = 1) {
        return subjects(scene.detect("cmd", exit_code, line + "\n"));
    };
    const std::string made =
        "cp: cannot create regular file '~/.ssh/new': No such file or directory";
    CHECK(found(made) == Subjects{"hidden /home/cztest/.ssh/new"});
    CHECK(found("Saving key \"/home/cztest/.ssh/id_new\" failed: No such file or directory") ==
          Subjects{"hidden /home/cztest/.ssh/id_new"});
    CHECK(found("mkdir: cannot create directory '/run/user/1001/x': No such file or directory") ==
          Subjects{"hidden /run/user/1001/x"});
    CHECK(found("Error: ENOENT: no such file or directory, mkdir '/run/user/1001/x'") ==
          Subjects{"hidden /run/user/1001/x"});
    // a read of a file missing there too reads the same whoever refused it
    CHECK(found("cat: /home/cztest/.ssh/new: No such file or directory").empty());
    CHECK(found("/home/cztest/.ssh/id_rsa: No such file or directory").empty());
    // the folder to hold it is missing on the host too
    CHECK(found("cp: cannot create regular file '~/.ssh/sub/new': No such file or directory")
              .empty());
    // nothing hides a visible folder: it is missing on the host too
    CHECK(found("cp: cannot create regular file '/opt/new': No such file or directory").empty());
    CHECK(found(made, 0).empty());
    scene.host.writable = {"/home/cztest/work"};
    CHECK(found(made).empty());
}

TEST_CASE("fish's redirect error needs the path line right above it", "[refusal_detector]") {
    const Scene scene;
    CHECK(scene
              .detect("echo x > /etc/x", 1,
                      "warning: An error occurred while redirecting file '/etc/x'\n"
                      "something else\n"
                      "open: Read-only file system\n")
              .empty());
}

TEST_CASE("A line about Docker or the bus is judged by those rules only", "[refusal_detector]") {
    Scene scene;
    scene.host.sockets.clear();
    scene.host.paths = {"/run/dbus/system_bus_socket", "/var/run/docker.sock"};
    CHECK(scene
              .detect("dbus-send --system", 1,
                      "Failed to open connection to \"system\" message bus: Failed to connect to "
                      "socket /run/dbus/system_bus_socket: No such file or directory\n")
              .empty());
    CHECK(scene
              .detect("docker ps", 1,
                      "dial unix /var/run/docker.sock: connect: no such file or directory\n")
              .empty());
}

TEST_CASE("Naming the bus or the Docker socket is no refusal", "[refusal_detector]") {
    const Scene scene;
    for (const char* line : {
             "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/dbus/system_bus_socket",
             "DOCKER_HOST=unix:///var/run/docker.sock",
             "srw-rw---- 1 root docker 0 Jan  1 10:00 /var/run/docker.sock",
             "dbus.service: Listening on D-Bus System Message Bus Socket.",
         }) {
        INFO(line);
        CHECK(scene.detect("cmd", 1, std::string(line) + "\n").empty());
    }
}

TEST_CASE("A Docker socket named only by DOCKER_HOST", "[refusal_detector]") {
    Scene scene;
    scene.host.sockets = {"/run/user/1001/docker.sock"};
    auto ctx = scene.context("docker-compose up", 1);
    ctx.docker_host = "unix:///run/user/1001/docker.sock";
    const std::string output =
        "docker.errors.DockerException: Error while fetching server API version: ('Connection "
        "aborted.', FileNotFoundError(2, 'No such file or directory'))\n";
    CHECK(subjects(detect_refusals(ctx, output)) == Subjects{"docker /run/user/1001/docker.sock"});
    ctx.docker_host = "ssh://me@build-host";
    CHECK(detect_refusals(ctx, output).empty());
}

TEST_CASE("Rootless Docker's and Podman's sockets in the runtime folder", "[refusal_detector]") {
    Scene scene;
    // docker-compose 1.x names no socket: the default one, else a rootless one.
    const std::string output =
        "docker.errors.DockerException: Error while fetching server API version: ('Connection "
        "aborted.', FileNotFoundError(2, 'No such file or directory'))\n";
    for (const char* socket : {"/run/user/1001/docker.sock", "/run/user/1001/podman/podman.sock"}) {
        scene.host.sockets = {socket};
        auto ctx = scene.context("docker-compose up", 1);
        ctx.env = {{"XDG_RUNTIME_DIR", "/run/user/1001"}};
        CHECK(subjects(detect_refusals(ctx, output)) == Subjects{std::string("docker ") + socket});
    }
    // Podman names the socket it dialled.
    scene.host.sockets = {"/run/user/1001/podman/podman.sock"};
    CHECK(subjects(scene.detect("podman ps", 125,
                                "Error: unable to connect to Podman socket: Get "
                                "\"http://d/v5.0.0/libpod/_ping\": dial unix "
                                "/run/user/1001/podman/podman.sock: connect: no such file or "
                                "directory\n")) ==
          Subjects{"docker /run/user/1001/podman/podman.sock"});
}

TEST_CASE("The session bus is the user's, found from the environment", "[refusal_detector]") {
    Scene scene;
    scene.host.sockets = {"/run/user/1001/bus", "/tmp/dbus-abc"};
    auto ctx = scene.context("systemctl --user restart x; echo done", 0);
    ctx.env = {{"XDG_RUNTIME_DIR", "/run/user/1001"}};
    const std::string output = "Failed to connect to bus: No such file or directory\ndone\n";
    const auto refusals = detect_refusals(ctx, output);
    REQUIRE(subjects(refusals) == Subjects{"bus /run/user/1001/bus"});
    CHECK(refusals[0].origin == "your session bus");
    ctx.env = {{"DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/dbus-abc,guid=1234"}};
    CHECK(subjects(detect_refusals(ctx, output)) == Subjects{"bus /tmp/dbus-abc"});
    CHECK(session_bus_socket({{"DBUS_SESSION_BUS_ADDRESS", "unix:abstract=/tmp/x"}}).empty());
    // The system bus, as before, for a command that does not use the session bus.
    scene.host.sockets = {"/run/dbus/system_bus_socket"};
    const auto system = scene.detect("systemctl restart x", 1, output);
    REQUIRE(subjects(system) == Subjects{"bus /run/dbus/system_bus_socket"});
    CHECK(system[0].origin == "the system bus");
}

TEST_CASE("Streaming in chunks finds what a whole output finds", "[refusal_detector]") {
    const Scene scene;
    const std::string output =
        "\x1b[32m 50%\r\x1b[K100%\x1b[0m\r\n"
        "\x1b[31mtouch: cannot touch '/etc/x': Read-only file system\x1b[0m\r\n"
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker "
        "daemon running?";
    const auto ctx = scene.context("touch /etc/x; docker ps", 1);
    const auto whole = detect_refusals(ctx, output);
    REQUIRE(subjects(whole) == Subjects{"write /etc/x", "docker /var/run/docker.sock"});
    for (std::size_t chunk = 1; chunk <= 7; ++chunk) {
        RefusalDetector detector;
        OutputLines lines([&detector](std::string_view line) { detector.observe_line(line); });
        for (std::size_t i = 0; i < output.size(); i += chunk) lines.feed(output.substr(i, chunk));
        lines.finish();
        CHECK(detector.finish(ctx) == whole);
    }
}

TEST_CASE("Candidate lines are kept from the head and the tail, each cut to 4 KiB",
          "[refusal_detector]") {
    const Scene scene;
    RefusalDetector detector;
    detector.observe_line("touch: cannot touch '/etc/first': Read-only file system");
    for (int i = 0; i < 5000; ++i)
        detector.observe_line("cat: /nowhere/" + std::to_string(i) + ": No such file or directory");
    detector.observe_line("bash: " + std::string(5000, 'x') + ": Read-only file system");
    detector.observe_line("touch: cannot touch '/etc/last': Read-only file system");
    CHECK(detector.stored_lines() == RefusalDetector::kHeadLines + RefusalDetector::kTailLines);
    CHECK(subjects(detector.finish(scene.context("cmd", 1))) ==
          Subjects{"write /etc/first", "write /etc/last"});
    CHECK(detector.stored_bytes() <= (RefusalDetector::kHeadLines + RefusalDetector::kTailLines) *
                                         RefusalDetector::kMaxLineBytes);
}

TEST_CASE("Lines that cannot be evidence are not kept", "[refusal_detector]") {
    RefusalDetector detector;
    for (const char* line : {"compiling foo.c", "done: 12 files", "", "warning: unused variable"})
        detector.observe_line(line);
    CHECK(detector.stored_lines() == 0);
}

TEST_CASE("200 MB of output keeps candidate storage bounded", "[refusal_detector]") {
    RefusalDetector detector;
    OutputLines lines([&detector](std::string_view line) { detector.observe_line(line); });
    std::string block;
    for (int i = 0; i < 1024; ++i) {
        block += "src/module" + std::to_string(i) + ".c:12: note: building object\n";
        block += "\x1b[31mcp: cannot create regular file '/etc/f" + std::to_string(i) +
                 "': Read-only file system\x1b[0m\r\n";
        block += "progress " + std::to_string(i % 100) + "%\r";
    }
    const std::size_t total = 200u * 1024 * 1024;
    std::size_t fed = 0;
    std::size_t peak = 0;
    while (fed < total) {
        lines.feed(block);
        fed += block.size();
        peak = std::max(peak, detector.stored_bytes());
    }
    lines.finish();
    const std::size_t bound = (RefusalDetector::kHeadLines + RefusalDetector::kTailLines) *
                              RefusalDetector::kMaxLineBytes;
    CHECK(detector.stored_lines() == RefusalDetector::kHeadLines + RefusalDetector::kTailLines);
    CHECK(peak <= bound);
    CHECK(peak < 64 * 1024);  // these lines are short, so far below the bound
}

TEST_CASE("Arbitrary bytes never break detection", "[refusal_detector]") {
    // Fragments of real messages, escape sequences and shell syntax, shuffled together with a
    // fixed seed: the detector must neither crash nor report evidence it did not see.
    const std::vector<std::string_view> pieces = {
        "touch: cannot touch '",
        "/etc/x",
        "': Read-only file system",
        ": ",
        "\n",
        "\r",
        "\b",
        "\x1b[",
        "\x1b]",
        "\x1b\\",
        "\x07",
        "\x1bP",
        "31m",
        "K",
        "'",
        "\"",
        "`",
        "\xe2\x80\x98",
        "\xe2\x80\x99",
        "sudo: ",
        "The \"no new privileges\" flag is set",
        "$(",
        ")",
        "(",
        "|",
        "Cannot connect to the Docker daemon at unix://",
        "Failed to connect to bus: ",
        "No such file or directory",
        "Permission denied",
        " (",
        "can't cd to ",
        "~",
        "$HOME",
        "${HOME}",
        "open: ",
        "An error occurred while redirecting file '",
        " - open (30",
        "\xff",
    };
    Scene scene;
    scene.host.writable = {"/"};
    std::uint32_t state = 12345;
    const auto next = [&state] {
        state = state * 1664525u + 1013904223u;
        return state >> 8;
    };
    for (int round = 0; round < 2000; ++round) {
        std::string text;
        for (int i = 0; i < 24; ++i) text += pieces[next() % pieces.size()];
        const auto refusals = scene.detect(text, static_cast<int>(next() % 2), text);
        for (const auto& r : refusals) {
            CHECK(!r.subject.empty());
            CHECK(r.evidence.size() <= 300);
        }
    }
}

TEST_CASE("Network failures are never a sandbox refusal", "[refusal_detector]") {
    const Scene scene;
    // What clients print when the proxy or the sandbox's own network namespace stops them.
    for (const char* output : {
             "curl: (6) Could not resolve host: example.com",
             "curl: (7) Failed to connect to 127.0.0.1 port 8080 after 0 ms: Connection refused",
             "curl: (7) Failed to connect to example.com port 443: Network is unreachable",
             "curl: (56) CONNECT tunnel failed, response 403",
             "curl: (22) The requested URL returned error: 403",
             "Blocked by Caretz's network policy: pypi.org:443 is not an allowed destination",
             "ERROR 403: Forbidden.",
             "fatal: unable to access 'https://github.com/x/y.git/': CONNECT tunnel failed, "
             "response 403",
             "ssh: connect to host github.com port 22: Network is unreachable",
             "ssh: Could not resolve hostname github.com: Temporary failure in name resolution",
             "Temporary failure resolving 'deb.debian.org'",
             "E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  403  "
             "Forbidden [IP: 127.0.0.1 3128]",
             "npm ERR! code E403",
             "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool("
             "host='pypi.org', port=443): Max retries exceeded (Caused by ProxyError('Cannot "
             "connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden')))",
             "socket.gaierror: [Errno -3] Temporary failure in name resolution",
             "ConnectionRefusedError: [Errno 111] Connection refused",
             "OSError: [Errno 101] Network is unreachable",
             "PermissionError: [Errno 13] Permission denied",
             "ping: socket: Operation not permitted",
             "wget: unable to resolve host address 'example.com'",
         }) {
        INFO(output);
        CHECK(
            scene.detect("curl -fsS https://example.com/", 7, std::string(output) + "\n").empty());
    }
}

namespace {

const std::string kNoNewPrivileges =
    "sudo: /etc/sudo.conf is owned by uid 65534, should be 0\n"
    "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.\n";

std::vector<Refusal> detect_with_runs(const Scene& scene, const std::string& command, int exit_code,
                                      const std::string& output, std::vector<ProgramRun> runs) {
    DetectionContext ctx = scene.context(command, exit_code);
    ctx.program_runs = std::move(runs);
    return detect_refusals(ctx, output);
}

}  // namespace

TEST_CASE("a script's sudo counts when the stand-in recorded it", "[refusal_detector]") {
    const Scene scene;
    const auto refusals = detect_with_runs(
        scene, "./deploy.sh", 0, kNoNewPrivileges + kNoNewPrivileges + "deploy finished\n",
        {{"sudo", "/home/cztest/work", {"sudo", "-n", "systemctl", "restart", "nginx"}},
         {"sudo", "/home/cztest/work/app", {"sudo", "-n", "true"}}});
    CHECK(subjects(refusals) ==
          Subjects{"sudo sudo -n systemctl restart nginx", "sudo sudo -n true"});
    CHECK(refusals[0].origin == "run by the command in /home/cztest/work");
    CHECK(refusals[1].origin == "run by the command in /home/cztest/work/app");
    CHECK(refusals[1].evidence ==
          "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.");
}

TEST_CASE("each run of sudo is named, the same line twice too", "[refusal_detector]") {
    const Scene scene;
    const ProgramRun run{"sudo", "/home/cztest/work", {"sudo", "-n", "true"}};
    const auto refusals = detect_with_runs(scene, "./deploy.sh", 0, kNoNewPrivileges, {run, run});
    CHECK(subjects(refusals) == Subjects{"sudo sudo -n true", "sudo sudo -n true"});
}

TEST_CASE("a loop of sudo names a bounded number of them", "[refusal_detector]") {
    const Scene scene;
    std::vector<ProgramRun> runs;
    for (int i = 0; i < 20; ++i) runs.push_back({"sudo", "/w", {"sudo", "rm", std::to_string(i)}});
    const auto refusals = detect_with_runs(scene, "./clean.sh", 1, kNoNewPrivileges, runs);
    REQUIRE(refusals.size() == 8);
    CHECK(refusals.back().origin == "run by the command in /w; 12 more runs of sudo not shown");
}

TEST_CASE("a watched sandbox trusts the records, not the command text", "[refusal_detector]") {
    const Scene scene;
    // Printing sudo's refusal line runs no sudo, even where the text names sudo.
    CHECK(detect_with_runs(scene, "grep -r \"no new privileges\" logs/", 0, kNoNewPrivileges, {})
              .empty());
    CHECK(detect_with_runs(scene, "echo sudo -n true; cat logs/sudo.log", 0, kNoNewPrivileges, {})
              .empty());
    // A record without sudo's refusal line: sudo ran and did not say the sandbox stopped it.
    CHECK(detect_with_runs(scene, "./deploy.sh", 1, "sudo: a password is required\n",
                           {{"sudo", "/w", {"sudo", "true"}}})
              .empty());
    // Nothing watched: the command text decides, as before.
    CHECK(subjects(scene.detect("sudo -n true", 1, kNoNewPrivileges)) == Subjects{"sudo sudo"});
    CHECK(scene.detect("./deploy.sh", 0, kNoNewPrivileges).empty());
}

TEST_CASE("a relative path that EROFS contradicts is found through -C and cd",
          "[refusal_detector]") {
    const Scene scene;
    const std::string tar =
        "tar: tool.sh: Cannot open: Read-only file system\n"
        "tar: sub: Cannot mkdir: Read-only file system\n"
        "tar: Exiting with failure status due to previous errors\n";
    CHECK(subjects(scene.detect("tar -xf bundle.tar -C ~/outside", 2, tar)) ==
          Subjects{"write /home/cztest/outside/tool.sh", "write /home/cztest/outside/sub"});
    CHECK(subjects(scene.detect("tar -xf ../bundle.tar -C /usr/share", 2, tar,
                                "/home/cztest/work/out")) ==
          Subjects{"write /usr/share/tool.sh", "write /usr/share/sub"});
    // A cd earlier in the same line moves where a relative -C points.
    CHECK(subjects(scene.detect("cd /srv && tar -xf ~/work/b.tar -C app", 2, tar)) ==
          Subjects{"write /srv/app/tool.sh", "write /srv/app/sub"});
    // -C into the workspace is no contradiction's answer: the subject stays as printed.
    CHECK(subjects(scene.detect("tar -xf b.tar -C build", 2, tar)) ==
          Subjects{"write tool.sh", "write sub"});
    // Nothing in the command says where: as printed, never an invented absolute path.
    CHECK(subjects(scene.detect("./install.sh", 2, tar)) == Subjects{"write tool.sh", "write sub"});
    // Two folders it could be: as printed.
    CHECK(subjects(scene.detect("tar -xf a.tar -C /opt; tar -xf b.tar -C /srv", 2,
                                "tar: tool.sh: Cannot open: Read-only file system\n")) ==
          Subjects{"write tool.sh"});
}

TEST_CASE("a relative path is only re-read for EROFS, and only when the command failed",
          "[refusal_detector]") {
    const Scene scene;
    // Permission and missing-file errors in the workspace are the command's own.
    CHECK(scene
              .detect("tar -xf b.tar -C /opt", 2,
                      "tar: tool.sh: Cannot open: Permission denied\n"
                      "tar: sub/a: Cannot open: No such file or directory\n")
              .empty());
    CHECK(scene
              .detect("tar -xf b.tar -C /opt; true", 0,
                      "tar: tool.sh: Cannot open: Read-only file system\n")
              .empty());
    // Changing a file's owner fails for a user on the host as well: no refusal.
    CHECK(scene
              .detect("tar -xpf b.tar -C /opt", 2,
                      "tar: tool.sh: Cannot change ownership to uid 0, gid 0: Operation not "
                      "permitted\n")
              .empty());
}

TEST_CASE("A write the host would refuse too is no refusal, whatever the error",
          "[refusal_detector]") {
    Scene scene;
    scene.host.writable = {"/home/cztest"};
    CHECK(scene.detect("touch /etc/x", 1, "touch: cannot touch '/etc/x': Read-only file system\n")
              .empty());
    CHECK(subjects(scene.detect("touch ~/.bashrc", 1,
                                "touch: cannot touch '/home/cztest/.bashrc': Read-only file "
                                "system\n")) == Subjects{"write /home/cztest/.bashrc"});
    // npm's symlink from the workspace into /usr: /usr explains the EROFS, so the workspace
    // path is no relative path printed from elsewhere.
    CHECK(scene
              .detect("npm install -g ./pkg", 226,
                      "npm error rofs EROFS: read-only file system, symlink "
                      "'../../../home/cztest/work/pkg' -> '/usr/lib/node_modules/pkg'\n")
              .empty());
    // Where a relative path points is asked of the host too; where nothing says, it counts.
    const std::string tar = "tar: tool.sh: Cannot open: Read-only file system\n";
    CHECK(scene.detect("tar -xf b.tar -C /opt", 2, tar).empty());
    CHECK(subjects(scene.detect("tar -xf b.tar -C ~/outside", 2, tar)) ==
          Subjects{"write /home/cztest/outside/tool.sh"});
    CHECK(subjects(scene.detect("./unpack.sh", 2, tar)) == Subjects{"write tool.sh"});
    // The protected .git/config of the workspace: the host lets its owner write it.
    const std::string busy =
        "Error: EBUSY: resource busy or locked, rename '.git/config.lock' -> '.git/config'\n";
    CHECK(subjects(scene.detect("node save.js", 1, busy)) ==
          Subjects{"write /home/cztest/work/.git/config"});
    scene.host.writable.clear();
    CHECK(scene.detect("node save.js", 1, busy).empty());
}

TEST_CASE("Read-only places inside a writable root are refused by the sandbox",
          "[refusal_detector]") {
    // Started in the home folder: the whole home is writable, but what the host runs later is
    // protected there and the home's top is sealed (sandbox/protection/host_run_paths.h).
    Scene scene;
    scene.policy = make_policy({}, "/home/cztest", "/home/cztest", {});
    FakeHostFs fs({{"/home", "d"},
                   {"/home/cztest", "d"},
                   {"/home/cztest/.bashrc", "f"},
                   {"/home/cztest/.config", "d"},
                   {"/home/cztest/work", "d"}});
    protect_home_configuration(scene.policy, fs);
    protect_host_run_paths(scene.policy, fs, {}, {}, {});
    const std::string cwd = "/home/cztest";
    CHECK(subjects(scene.detect("echo 'alias ll=ls' >> ~/.bashrc", 1,
                                "bash: /home/cztest/.bashrc: Read-only file system\n", cwd)) ==
          Subjects{"write /home/cztest/.bashrc"});
    CHECK(subjects(scene.detect("printf x >> ~/.bash_profile", 1,
                                "bash: /home/cztest/.bash_profile: Read-only file system\n",
                                cwd)) == Subjects{"write /home/cztest/.bash_profile"});
    CHECK(subjects(scene.detect("mkdir -p ~/.config/autostart", 1,
                                "mkdir: cannot create directory "
                                "\xe2\x80\x98/home/cztest/.config/autostart\xe2\x80\x99: "
                                "Read-only file system\n",
                                cwd)) == Subjects{"write /home/cztest/.config/autostart"});
    // A new ordinary file at the sealed top: offered, since the host lets the user write it.
    CHECK(subjects(scene.detect("echo ok > notes.txt", 1,
                                "bash: notes.txt: Read-only file system\n", cwd)) ==
          Subjects{"write /home/cztest/notes.txt"});
    // Inside a folder of the home the sandbox lets it write: a denial is the command's own.
    CHECK(scene.detect("echo ok > work/a.txt", 1, "bash: work/a.txt: Permission denied\n", cwd)
              .empty());
}
