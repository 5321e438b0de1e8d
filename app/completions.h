#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace caretz {

// Type names of option values that the shell completions offer values for; the command line
// gives an option one of these, and its completion follows.
inline constexpr const char* kProfileValue = "PROFILE";    // profile names, asked at the time
inline constexpr const char* kDurationValue = "DURATION";  // 90s, 5m, 1h
inline constexpr const char* kFileValue = "FILE";          // file names

// What the command line looks like to a completion, read off the CLI11 definition.
struct CompletionOption {
    std::vector<std::string> names;  // "--profile", "-p"
    std::string help;
    // Empty for a flag; otherwise kProfileValue, kDurationValue, kFileValue, "TEXT" for free
    // text, or "CHOICE" with `choices` (an IsMember check's set).
    std::string value;
    std::vector<std::string> choices;
};

struct CompletionCommand {
    std::string path;  // "caretz", "caretz exec"
    std::string help;
    std::vector<CompletionOption> options;
    std::vector<std::string> children;  // visible subcommands' names
    bool runs_command = false;          // the rest of the line is a command (caretz exec)
};

// Every visible (sub)command of `app`, the program itself first. Hidden subcommands (group "")
// are left out.
std::vector<CompletionCommand> completion_commands(CLI::App& app);

// The completion script for `shell` (bash, zsh or fish) for the program `app` defines. The
// scripts ask `caretz completions profiles [--config FILE]` for profile names when they
// complete, so they follow the user's config.
std::string completion_script(CLI::App& app, const std::string& shell);

}  // namespace caretz
