#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace caretz {

// A shell command line split the way the shell would run it, enough to tell which programs it
// starts. Not a full parser: it knows quoting, operators, comments, redirections and
// substitutions, which is what deciding "does this run sudo" needs.
struct ShellScan {
    // Each simple command's words, quotes removed, redirections and their targets dropped.
    std::vector<std::vector<std::string>> commands;
    // The text of every $(...), `...`, <(...) and >(...): commands of their own.
    std::vector<std::string> substitutions;
};

ShellScan scan_shell(std::string_view text);

// True when the command text runs sudo as a program: as a command word, after assignments or
// reserved words, behind wrappers such as env, time, nice, nohup, exec, command, xargs, timeout
// and stdbuf, inside substitutions, or in a `sh -c` script. Not when sudo is only an argument
// (`echo sudo`, `which sudo`, `grep "sudo: ..." logs/`).
bool runs_sudo(std::string_view command);

// The absolute paths (`/x`, `~/x`, `$HOME/x`) the command text names anywhere, inside quoted
// scripts too (perl -e 'open(F, ">", "/x") or die "$!"'), each once, in order: what a tool
// that names no path in its error may have meant.
std::vector<std::string> named_paths(std::string_view command);

// True when a program of the text talks to the user's session bus rather than the system bus
// when its message does not say which: `systemctl --user` (busctl, journalctl, loginctl too),
// gdbus or dbus-send with `--session` (dbus-send without `--system`), gsettings, dconf and
// `brew services`.
bool uses_session_bus(std::string_view command);

// Where each simple command of the text runs, in the order written: `cd DIR` and `pushd DIR`
// change the cwd of what follows (changes_cwd); any other program runs in that cwd, or in the
// folder its `-C DIR` / `-CDIR` (tar, make, git) or `--directory=DIR` / `--directory DIR` (tar,
// make) names; `dir` is empty when it names none.
struct DirectoryArgument {
    std::string dir;  // as written, quotes removed
    bool changes_cwd;
};

std::vector<DirectoryArgument> directory_arguments(std::string_view command);

}  // namespace caretz
