#include "hooks/shell_launch.h"

#include <algorithm>
#include <cctype>

#include "hooks/embedded_hooks.h"

namespace caretz {

namespace {

// A fish single-quoted string: only backslash and the quote itself need escaping.
std::string fish_quote(std::string_view text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\\' || c == '\'') out.push_back('\\');
        out.push_back(c);
    }
    out.push_back('\'');
    return out;
}

}  // namespace

std::string_view hook_script(std::string_view shell_name) {
    if (shell_name != "bash" && shell_name != "zsh" && shell_name != "fish") return {};
    return embedded_hook_file(shell_name);
}

std::string_view supported_shell_name(std::string_view shell_path) {
    size_t slash = shell_path.rfind('/');
    std::string_view name =
        slash == std::string_view::npos ? shell_path : shell_path.substr(slash + 1);
    if (name == "bash" || name == "zsh" || name == "fish") return name;
    return {};
}

bool is_plain_nonce(std::string_view nonce) {
    return !nonce.empty() && std::all_of(nonce.begin(), nonce.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0;
    });
}

ShellLaunch shell_launch(std::string_view shell_path, const std::string& hook_dir,
                         const std::string& home, const std::optional<std::string>& user_zdotdir) {
    std::string_view name = supported_shell_name(shell_path);
    std::string shell(shell_path);
    ShellLaunch launch;
    launch.env["CARETZ_NONCE_FD"] = std::to_string(kNonceFd);
    launch.env["HOME"] = home;
    if (name == "bash") {
        std::string rc = hook_dir + "/bashrc";
        launch.argv = {shell, "--init-file", rc, "-i"};
        launch.files.emplace_back(rc, embedded_hook_file("bash"));
    } else if (name == "zsh") {
        std::string zdotdir = hook_dir + "/zsh";
        launch.argv = {shell, "-i"};
        launch.env["ZDOTDIR"] = zdotdir;
        if (user_zdotdir) launch.env["CARETZ_USER_ZDOTDIR"] = *user_zdotdir;
        launch.files.emplace_back(zdotdir + "/.zshenv", embedded_hook_file("zshenv"));
        launch.files.emplace_back(zdotdir + "/.zshrc", embedded_hook_file("zsh"));
    } else if (name == "fish") {
        std::string hook = hook_dir + "/hook.fish";
        launch.argv = {shell, "-i", "--init-command", "source " + fish_quote(hook)};
        launch.files.emplace_back(hook, embedded_hook_file("fish"));
    } else {
        throw UnsupportedShell("the session shell " + shell +
                               " is not supported; set SHELL to bash, zsh or fish");
    }
    const std::string guard = hook_dir + "/guard.so";
    launch.files.emplace_back(guard, embedded_shell_guard());
    launch.env["LD_PRELOAD"] = guard;
    return launch;
}

std::map<std::string, std::string> environment_for(const ShellLaunch& launch,
                                                   std::map<std::string, std::string> user_env) {
    std::string user_preload = user_env.count("LD_PRELOAD") ? user_env["LD_PRELOAD"] : "";
    for (const auto& [name, value] : launch.env) user_env[name] = value;
    if (!user_preload.empty()) user_env["LD_PRELOAD"] += ":" + user_preload;
    return user_env;
}

}  // namespace caretz
