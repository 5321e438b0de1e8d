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

// Whether a repository made inside the sandbox may keep this setting: only what `git init` and
// `git clone` write (the format, the remotes and branches, submodules' URLs and worktree), and
// nothing that names a command, a hooks folder, a file to include or a pager. Everything else
// (core.hooksPath, core.fsmonitor, core.sshCommand, alias.*, filter.*, include.path, ...) is
// left out, so the list is of what is safe, not of what is known to be dangerous.
bool kept_from_sandbox(const std::string& key);

// A config file that holds `entries`, in order, in git's own syntax.
std::string git_config_text(const std::vector<GitConfigEntry>& entries);

}  // namespace caretz
