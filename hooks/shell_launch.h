#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace caretz {

// The hook script for "bash", "zsh" or "fish" (for zsh, the part read as .zshrc); empty for any
// other name.
std::string_view hook_script(std::string_view shell_name);

// "bash", "zsh" or "fish" for a shell path such as /usr/bin/zsh; empty for any other shell.
std::string_view supported_shell_name(std::string_view shell_path);

// The session shell is not one Caretz has hooks for.
class UnsupportedShell : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// How to start a session shell with the hooks injected, without touching the user's files.
struct ShellLaunch {
    std::vector<std::string> argv;
    // Variables to set on top of the user's environment (see environment_for below).
    std::map<std::string, std::string> env;
    // The files (path, content) the shell reads, all under the hook dir; they must be in place
    // before it starts.
    std::vector<std::pair<std::string, std::string>> files;
};

// The session shell reads the session nonce from this descriptor: a pipe holding the nonce and
// a newline, its write end already closed. The nonce is never in a file or in the environment,
// where the commands of the sandbox (the same user) could read it.
constexpr int kNonceFd = 3;

// Whether `nonce` can tag marks: letters and digits only, as the hooks paste it unquoted.
bool is_plain_nonce(std::string_view nonce);

// The launch of `shell_path` (bash, zsh or fish) as an interactive session shell for the user
// whose home is `home` (HOME is set to it), with hooks under `hook_dir` (a directory private to
// the session). The shell loads the user's rc as it normally would, then the hooks:
//   bash: bash --init-file HOOK_DIR/bashrc -i
//   zsh:  zsh -i with ZDOTDIR=HOOK_DIR/zsh, whose .zshenv and .zshrc restore the user's
//         ZDOTDIR (`user_zdotdir`, the user's own $ZDOTDIR if they have one) and read the
//         user's files first
//   fish: fish -i --init-command 'source HOOK_DIR/hook.fish' (after the user's config.fish)
// The files depend on nothing but the shell and HOOK_DIR, so they can be put in place read-only
// before the sandbox starts. The shell also preloads HOOK_DIR/guard.so (hooks/shell_guard.c):
// it makes the shell undumpable, so the commands it runs can neither read the nonce from its
// memory nor trace it; it marks the nonce descriptor close-on-exec, so no command inherits it;
// and it takes itself off LD_PRELOAD before the shell reads its environment.
// The hooks read the nonce (descriptor named by CARETZ_NONCE_FD) into an unexported shell
// variable before the user's rc runs (fish: after config.fish) and close it where the shell can.
// The shell starts with its first command: CARETZ_FIRST_COMMAND names the file that holds it
// and CARETZ_FIRST_COMMAND_INPUT says whether it reads the terminal ("terminal") or nothing
// ("none"). The hooks run it once the rc is read, as if it were typed at the first prompt:
// after the user's prompt code, with no prompt drawn and no line read. For each next command,
// once a prompt-end mark arrives, type `__caretz_run FILE` + "\r" to run the commands in FILE
// in the shell itself. Either way come the command-start mark, the output, then the
// command-done mark with FILE's status. __caretz_run is an alias in bash and zsh and a
// function without scope shadowing in fish, so `declare`, `typeset` and `set` in FILE act as
// if typed at the prompt.
// Throws UnsupportedShell for any other shell.
ShellLaunch shell_launch(std::string_view shell_path, const std::string& hook_dir,
                         const std::string& home,
                         const std::optional<std::string>& user_zdotdir = std::nullopt);

// The environment to start the shell with: `user_env` with the launch's variables on top,
// except that LD_PRELOAD keeps what the user had, after the guard.
std::map<std::string, std::string> environment_for(const ShellLaunch& launch,
                                                   std::map<std::string, std::string> user_env);

}  // namespace caretz
