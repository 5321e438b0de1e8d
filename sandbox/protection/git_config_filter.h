#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// One setting of a git config file as `git config --list --null` prints it: the key with its
// section and name in lower case ("remote.origin.url"), and its value (nullopt for a key
// written without `=`, which git reads as true).
struct GitConfigEntry {
    std::string key;
    std::optional<std::string> value;
};

// The entries in the output of `git config --file F --no-includes --list --null`; nullopt
// when the output is not in that form.
std::optional<std::vector<GitConfigEntry>> parse_git_config_list(std::string_view output);

// The settings in the config file `path` as git reads it, asking git itself, so no parser of
// Caretz's can read the file differently from the git that will use it. Git runs with no
// config of the user's, outside any repository, and does not follow includes. nullopt when
// git cannot read it (or is not installed).
std::optional<std::vector<GitConfigEntry>> read_git_config(const std::string& path);

// Whether a repository made inside the sandbox may keep this setting: only what `git init` and
// `git clone` write (the format, the remotes and branches, submodules' URLs and worktree), and
// nothing that names a command, a hooks folder, a file to include or a pager. Everything else
// (core.hooksPath, core.fsmonitor, core.sshCommand, alias.*, filter.*, include.path, ...) is
// left out, so the list is of what is safe, not of what is known to be dangerous.
bool kept_from_sandbox(const std::string& key);

// A config file that holds `entries`, in order, in git's own syntax.
std::string git_config_text(const std::vector<GitConfigEntry>& entries);

}  // namespace caretz
