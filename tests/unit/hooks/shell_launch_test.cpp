#include "hooks/shell_launch.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "hooks/embedded_hooks.h"
#include "tests/unit/temp_dir.h"

using caretz::hook_script;
using caretz::shell_launch;
using caretz::ShellLaunch;
using caretz::supported_shell_name;

TEST_CASE("hook scripts are embedded for the three shells only", "[hooks]") {
    CHECK(hook_script("bash").find("PROMPT_COMMAND") != std::string_view::npos);
    CHECK(hook_script("zsh").find("precmd_functions") != std::string_view::npos);
    CHECK(hook_script("fish").find("fish_postexec") != std::string_view::npos);
    CHECK(hook_script("sh").empty());
    CHECK(hook_script("zshenv").empty());
    CHECK(hook_script("").empty());
}

TEST_CASE("shells are recognised by the name of their path", "[hooks]") {
    CHECK(supported_shell_name("/bin/bash") == "bash");
    CHECK(supported_shell_name("/usr/local/bin/zsh") == "zsh");
    CHECK(supported_shell_name("fish") == "fish");
    CHECK(supported_shell_name("/bin/sh").empty());
    CHECK(supported_shell_name("/usr/bin/bash-static").empty());
}

TEST_CASE("bash starts with the hook as its init file", "[hooks]") {
    ShellLaunch launch = shell_launch("/bin/bash", "/run/h", "/home/u");
    CHECK(launch.argv ==
          std::vector<std::string>{"/bin/bash", "--init-file", "/run/h/bashrc", "-i"});
    CHECK(launch.env.at("HOME") == "/home/u");
    REQUIRE(launch.files.size() == 2);
    CHECK(launch.files[0].first == "/run/h/bashrc");
    CHECK(launch.files[0].second == hook_script("bash"));
}

TEST_CASE("the nonce comes on a descriptor, never in a file or the environment", "[hooks]") {
    for (const char* shell : {"/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"}) {
        ShellLaunch launch = shell_launch(shell, "/run/h", "/home/u");
        CHECK(launch.env.at("CARETZ_NONCE_FD") == std::to_string(caretz::kNonceFd));
        CHECK(launch.env.count("CARETZ_NONCE_FILE") == 0);
        for (const auto& [path, content] : launch.files)
            CHECK(path.rfind("/nonce") == std::string::npos);
    }
}

TEST_CASE("zsh starts with ZDOTDIR on the hook's shim", "[hooks]") {
    ShellLaunch launch = shell_launch("/usr/bin/zsh", "/run/h", "/home/u");
    CHECK(launch.argv == std::vector<std::string>{"/usr/bin/zsh", "-i"});
    CHECK(launch.env.at("ZDOTDIR") == "/run/h/zsh");
    CHECK(launch.env.count("CARETZ_USER_ZDOTDIR") == 0);
    REQUIRE(launch.files.size() == 3);
    CHECK(launch.files[0].first == "/run/h/zsh/.zshenv");
    CHECK(launch.files[1].first == "/run/h/zsh/.zshrc");
    CHECK(launch.files[1].second == hook_script("zsh"));

    ShellLaunch with_own = shell_launch("/usr/bin/zsh", "/run/h", "/home/u", "/home/u/.z");
    CHECK(with_own.env.at("CARETZ_USER_ZDOTDIR") == "/home/u/.z");
}

TEST_CASE("fish sources the hook through --init-command", "[hooks]") {
    ShellLaunch launch = shell_launch("/usr/bin/fish", "/run/it's", "/home/u");
    CHECK(launch.argv == std::vector<std::string>{"/usr/bin/fish", "-i", "--init-command",
                                                  "source '/run/it\\'s/hook.fish'"});
    REQUIRE(launch.files.size() == 2);
    CHECK(launch.files[0].first == "/run/it's/hook.fish");
}

TEST_CASE("other shells are refused with a sentence", "[hooks]") {
    CHECK_THROWS_AS(shell_launch("/bin/dash", "/run/h", "/home/u"), caretz::UnsupportedShell);
    CHECK_THROWS_WITH(shell_launch("/bin/dash", "/run/h", "/home/u"),
                      Catch::Contains("bash, zsh or fish"));
}

TEST_CASE("only letters and digits make a nonce", "[hooks]") {
    CHECK(caretz::is_plain_nonce("abc123"));
    CHECK_FALSE(caretz::is_plain_nonce(""));
    CHECK_FALSE(caretz::is_plain_nonce("ab'c"));
    CHECK_FALSE(caretz::is_plain_nonce("a b"));
    CHECK_FALSE(caretz::is_plain_nonce("a\nb"));
}
TEST_CASE("every shell preloads the guard, written from the binary", "[hooks]") {
    for (const char* shell : {"/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"}) {
        ShellLaunch launch = shell_launch(shell, "/run/h", "/home/u");
        CHECK(launch.env.at("LD_PRELOAD") == "/run/h/guard.so");
        REQUIRE(launch.files.back().first == "/run/h/guard.so");
        CHECK(launch.files.back().second == caretz::embedded_shell_guard());
    }
    CHECK(caretz::embedded_shell_guard().substr(0, 4) ==
          "\x7f"
          "ELF");
}

TEST_CASE("the user's LD_PRELOAD is kept, after the guard", "[hooks]") {
    ShellLaunch launch = shell_launch("/bin/bash", "/run/h", "/home/u");
    auto env = caretz::environment_for(launch, {{"PATH", "/bin"}, {"LD_PRELOAD", "libmine.so"}});
    CHECK(env.at("LD_PRELOAD") == "/run/h/guard.so:libmine.so");
    CHECK(env.at("PATH") == "/bin");
    CHECK(env.at("HOME") == "/home/u");
    CHECK(caretz::environment_for(launch, {{"HOME", "/elsewhere"}}).at("HOME") == "/home/u");
    CHECK(caretz::environment_for(launch, {}).at("LD_PRELOAD") == "/run/h/guard.so");
}

namespace {

// What `SHELL -c COMMAND` prints when the shell starts with LD_PRELOAD=`preload`.
std::string preload_seen_by_child(const std::string& preload, const char* shell = "/bin/sh",
                                  const char* command = "printenv LD_PRELOAD || echo none") {
    int out[2];
    REQUIRE(::pipe(out) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::dup2(out[1], STDOUT_FILENO);
        ::setenv("LD_PRELOAD", preload.c_str(), 1);
        ::execl(shell, shell, "-c", command, static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(out[1]);
    std::string seen;
    char buf[256];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof buf)) > 0) seen.append(buf, static_cast<size_t>(n));
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return seen;
}

}  // namespace

TEST_CASE("the guard takes itself off LD_PRELOAD, so the shell's commands do not load it",
          "[hooks]") {
    caretz::TempDir dir;
    const std::string guard = (dir.path() / "guard.so").string();
    {
        std::ofstream file(guard, std::ios::binary);
        std::string_view bytes = caretz::embedded_shell_guard();
        file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    CHECK(preload_seen_by_child(guard) == "none\n");
    // libc is loaded anyway, so preloading it changes nothing but the variable.
    CHECK(preload_seen_by_child(guard + ":libc.so.6") == "libc.so.6\n");
    CHECK(preload_seen_by_child(guard + " libc.so.6") == "libc.so.6\n");
    // bash brings its own getenv, setenv and unsetenv, which the guard must not rely on. A
    // command that loaded the guard would strip it from its own environment too, so what
    // tells is whether the command has it mapped.
    for (const char* shell : {"/bin/sh", "/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"}) {
        INFO(shell);
        CHECK(preload_seen_by_child(guard, shell, "grep -c guard.so /proc/self/maps") == "0\n");
        CHECK(preload_seen_by_child(guard + ":libc.so.6", shell) == "libc.so.6\n");
    }
}
