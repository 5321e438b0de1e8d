#include "hooks/shell_launch.h"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

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
    ShellLaunch launch = shell_launch("/bin/bash", "/run/h", "abc123", "/home/u");
    CHECK(launch.argv ==
          std::vector<std::string>{"/bin/bash", "--init-file", "/run/h/bashrc", "-i"});
    CHECK(launch.env.at("HOME") == "/home/u");
    REQUIRE(launch.files.size() == 2);
    CHECK(launch.files[1].first == "/run/h/bashrc");
    CHECK(launch.files[1].second == hook_script("bash"));
}

TEST_CASE("the nonce travels in a file the hook deletes, never in the environment", "[hooks]") {
    for (const char* shell : {"/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"}) {
        ShellLaunch launch = shell_launch(shell, "/run/h", "abc123", "/home/u");
        for (const auto& [name, value] : launch.env) CHECK(value.find("abc123") == std::string::npos);
        REQUIRE(!launch.files.empty());
        CHECK(launch.files[0].first == "/run/h/nonce");
        CHECK(launch.files[0].second == "abc123\n");
        CHECK(launch.env.at("CARETZ_NONCE_FILE") == "/run/h/nonce");
    }
}

TEST_CASE("zsh starts with ZDOTDIR on the hook's shim", "[hooks]") {
    ShellLaunch launch = shell_launch("/usr/bin/zsh", "/run/h", "abc123", "/home/u");
    CHECK(launch.argv == std::vector<std::string>{"/usr/bin/zsh", "-i"});
    CHECK(launch.env.at("ZDOTDIR") == "/run/h/zsh");
    CHECK(launch.env.count("CARETZ_USER_ZDOTDIR") == 0);
    REQUIRE(launch.files.size() == 3);
    CHECK(launch.files[1].first == "/run/h/zsh/.zshenv");
    CHECK(launch.files[2].first == "/run/h/zsh/.zshrc");
    CHECK(launch.files[2].second == hook_script("zsh"));

    ShellLaunch with_own =
        shell_launch("/usr/bin/zsh", "/run/h", "abc123", "/home/u", "/home/u/.z");
    CHECK(with_own.env.at("CARETZ_USER_ZDOTDIR") == "/home/u/.z");
}

TEST_CASE("fish sources the hook through --init-command", "[hooks]") {
    ShellLaunch launch = shell_launch("/usr/bin/fish", "/run/it's", "abc123", "/home/u");
    CHECK(launch.argv == std::vector<std::string>{"/usr/bin/fish", "-i", "--init-command",
                                                  "source '/run/it\\'s/hook.fish'"});
    REQUIRE(launch.files.size() == 2);
    CHECK(launch.files[1].first == "/run/it's/hook.fish");
}

TEST_CASE("other shells are refused with a sentence", "[hooks]") {
    CHECK_THROWS_AS(shell_launch("/bin/dash", "/run/h", "abc", "/home/u"),
                    caretz::UnsupportedShell);
    CHECK_THROWS_WITH(shell_launch("/bin/dash", "/run/h", "abc", "/home/u"),
                      Catch::Contains("bash, zsh or fish"));
}

TEST_CASE("a nonce that is not letters and digits is refused", "[hooks]") {
    CHECK_THROWS_AS(shell_launch("/bin/bash", "/run/h", "", "/home/u"), std::invalid_argument);
    CHECK_THROWS_AS(shell_launch("/bin/bash", "/run/h", "ab'c", "/home/u"), std::invalid_argument);
    CHECK_THROWS_AS(shell_launch("/bin/zsh", "/run/h", "a b", "/home/u"), std::invalid_argument);
}
