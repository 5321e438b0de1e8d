#include "sandbox/protection/host_run_paths.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "sandbox/bwrap_command.h"
#include "sandbox/path_names.h"

namespace caretz {

const std::vector<HostRunEntry>& host_run_by_default() {
    // Left out: ~/.inputrc (readline binds keys to text, never to a program), history files
    // (read as text), ~/.local/share/fish (fish's history; its vendor folders come from
    // XDG_DATA_DIRS, outside the home), and files that a user's own rc sources by a name of its
    // own (nvm.sh, a plugin manager's folder): they are not known in general; the rc that
    // names them is protected, and sandbox.hidden or a narrower workspace covers the rest.
    static const std::vector<HostRunEntry> table = {
        {{Under::home, ".profile"}, "login shells (sh, dash, bash without .bash_profile)"},
        {{Under::home, ".bash_profile"}, "bash login shells"},
        {{Under::home, ".bash_login"}, "bash login shells without .bash_profile"},
        {{Under::home, ".bashrc"}, "every interactive bash"},
        {{Under::home, ".bash_logout"}, "the end of every bash login shell"},
        {{Under::home, ".bash_aliases"}, "Debian's .bashrc sources it"},
        {{Under::home, ".bashrc.d"}, "many .bashrc files source everything in it"},
        {{Under::home, ".shrc", "ENV"}, "interactive sh and dash read $ENV"},
        {{Under::home, ".zshenv", "ZDOTDIR", ".zshenv"}, "every zsh"},
        {{Under::home, ".zprofile", "ZDOTDIR", ".zprofile"}, "zsh login shells"},
        {{Under::home, ".zshrc", "ZDOTDIR", ".zshrc"}, "every interactive zsh"},
        {{Under::home, ".zlogin", "ZDOTDIR", ".zlogin"}, "zsh login shells"},
        {{Under::home, ".zlogout", "ZDOTDIR", ".zlogout"}, "the end of zsh login shells"},
        {{Under::home, ".oh-my-zsh", "ZSH"}, "the .zshrc oh-my-zsh writes sources it"},
        // Whole: config.fish, conf.d and functions run, and a universal variable
        // (fish_user_paths) changes every later fish's PATH.
        {{Under::config_home, "fish"}, "every fish"},
        {{Under::home, ".pam_environment"}, "pam_env sets it at every login"},
        {{Under::home, ".xprofile"}, "display managers at a desktop login"},
        {{Under::home, ".xsessionrc"}, "Debian's X session start"},
        {{Under::home, ".xsession"}, "the X session start"},
        {{Under::home, ".xinitrc"}, "startx"},
        {{Under::config_home, "systemd/user"}, "systemd starts the user's units"},
        {{Under::data_home, "systemd/user"}, "systemd starts the user's units"},
        {{Under::config_home, "environment.d"}, "systemd's user environment at login"},
        {{Under::config_home, "autostart"}, "the desktop starts these entries at login"},
        {{Under::config_home, "plasma-workspace/env"}, "KDE sources these at login"},
        {{Under::data_home, "applications"}, "the desktop runs these to open files"},
        {{Under::config_home, "mimeapps.list"}, "which program opens which file"},
        {{Under::home, ".local/bin"}, "on PATH ahead of /usr/bin (Debian's .profile)"},
        {{Under::home, "bin"}, "on PATH ahead of /usr/bin (Debian's .profile)"},
        {{Under::home, ".cargo/env"}, "rustup's line in .profile sources it"},
        {{Under::home, ".cargo/config.toml", "CARGO_HOME", "config.toml"},
         "cargo runs the programs it names (build.rustc-wrapper)"},
        {{Under::home, ".cargo/config", "CARGO_HOME", "config"},
         "cargo runs the programs it names (build.rustc-wrapper)"},
        {{Under::home, ".vimrc"}, "every vim"},
        {{Under::home, ".exrc"}, "vi and vim"},
        {{Under::home, ".gvimrc"}, "every gvim"},
        {{Under::home, ".vim"}, "vim runs its plugins at every start"},
        {{Under::config_home, "nvim"}, "every neovim"},
        {{Under::data_home, "nvim/site"}, "neovim runs its plugins at every start"},
        {{Under::home, ".emacs"}, "every emacs"},
        {{Under::home, ".emacs.el"}, "every emacs"},
        {{Under::home, ".emacs.d"}, "every emacs"},
        {{Under::config_home, "emacs"}, "every emacs"},
        {{Under::home, ".tmux.conf"}, "every tmux server (run-shell)"},
        {{Under::config_home, "tmux"}, "every tmux server (run-shell)"},
        {{Under::home, ".screenrc"}, "every screen"},
        {{Under::home, ".vscode"}, "VS Code runs the extensions in it"},
        {{Under::config_home, "Code/User"}, "VS Code's settings and tasks"},
    };
    return table;
}

const std::vector<RepositoryRunEntry>& repository_run_entries() {
    // Left out: what runs only when the user runs it by name (Makefile, package.json's
    // scripts), what runs elsewhere (.github/workflows, on GitHub's machines), versions and
    // plain settings (.tool-versions, .nvmrc, .editorconfig), and .pre-commit-config.yaml and
    // lefthook's configs where no hook of theirs is installed (hook_manager_entries()).
    static const char* const mise =
        "mise runs its env, hooks and tasks; `mise trust` is kept per path";
    static const std::vector<RepositoryRunEntry> table = {
        {".vscode", true, "VS Code runs its tasks and obeys its settings in a trusted folder"},
        {".idea", true, "JetBrains IDEs run its run configurations and startup tasks"},
        {".devcontainer", true, "Dev Containers runs its commands on the host"},
        {".claude", true, "Claude Code runs the hooks its settings name"},
        {".zed", true, "Zed runs its tasks and the language servers its settings name"},
        {".cursor", true, "Cursor runs its hooks and MCP servers in a trusted folder"},
        {".windsurf", true, "Windsurf's Cascade runs the hooks its hooks.json names"},
        {".kiro", true, "Kiro runs its agent hooks on file events"},
        {".roo", true, "Roo Code starts the MCP servers of its mcp.json"},
        {".continue", true, "Continue starts the MCP servers its config names"},
        {".gemini", true, "Gemini CLI runs its hooks and MCP servers in a trusted folder"},
        {".qwen", true, "Qwen Code runs its hooks and MCP servers in a trusted folder"},
        {".codex", true, "Codex obeys its config.toml (MCP servers) and hooks when trusted"},
        {".github/hooks", true, "GitHub Copilot's agents run the hooks there"},
        {"mise.toml", false, mise},
        {".mise.toml", false, mise},
        {"mise.local.toml", false, mise},
        {".mise.local.toml", false, mise},
        {".mise", true, mise},
        {".config/mise.toml", false, mise},
        {".config/mise", true, mise},
        // Not "asks first": the offer to reopen the folder in a container names no command,
        // and initializeCommand then runs on the host, as for a .devcontainer folder.
        {".devcontainer.json", false, "Dev Containers runs its initializeCommand on the host"},
        {".envrc", false, "direnv; a new or changed one only after `direnv allow`", true},
        {".mcp.json", false, "Claude Code starts its servers; a new one only once approved", true},
    };
    return table;
}

const RepositoryRunEntry* repository_run_entry(std::string_view folder, std::string_view name) {
    // Most names a search lists are none of these: a look at the first letter first.
    if (name.empty() || (name[0] != '.' && name[0] != 'm' && name != "hooks")) return nullptr;
    for (const auto& entry : repository_run_entries()) {
        const std::string_view row = entry.name;
        const auto slash = row.find('/');
        if (slash == std::string_view::npos
                ? row == name
                : row.substr(0, slash) == folder && row.substr(slash + 1) == name)
            return &entry;
    }
    return nullptr;
}

namespace {

// The strings, basic ("...") or literal ('...'), of the TOML array `key = [ ... ]` in the section
// `[section]`.
std::vector<std::string> toml_strings(const std::string& text, const std::string& section,
                                      const std::string& key) {
    std::vector<std::string> out;
    const auto header = text.find("[" + section + "]");
    if (header == std::string::npos) return out;
    const auto end = text.find("\n[", header + 1);
    const std::string body = text.substr(header, end == std::string::npos ? end : end - header);
    for (size_t at = body.find(key); at != std::string::npos; at = body.find(key, at + 1)) {
        if (at > 0 &&
            (std::isalnum(static_cast<unsigned char>(body[at - 1])) || body[at - 1] == '_'))
            continue;
        const auto open = body.find_first_not_of(" \t=", at + key.size());
        if (open == std::string::npos || body[open] != '[') continue;
        const auto close = body.find(']', open);
        for (size_t q = body.find_first_of("\"'", open); q < close;
             q = body.find_first_of("\"'", q + 1)) {
            const auto end_quote = body.find(body[q], q + 1);
            if (end_quote > close) break;
            out.push_back(body.substr(q + 1, end_quote - q - 1));
            q = end_quote;
        }
    }
    return out;
}

// Whether the JSON text sets `"key": true` (anywhere: the file is the user's own).
bool json_true(const std::string& text, const std::string& key) {
    for (size_t at = text.find("\"" + key + "\""); at != std::string::npos;
         at = text.find("\"" + key + "\"", at + 1)) {
        const auto value = text.find_first_not_of(" \t\r\n:", at + key.size() + 2);
        if (value != std::string::npos && text.compare(value, 4, "true") == 0) return true;
    }
    return false;
}

// The TOML file direnv reads its [whitelist] from (direnv's internal/cmd/config.go, LoadConfig):
// in $DIRENV_CONFIG, else $XDG_CONFIG_HOME/direnv, else ~/.config/direnv; direnv.toml there, or
// config.toml, its name before direnv 2.21, where no direnv.toml exists.
std::string direnv_config(const HostFs& fs, const std::string& home, const Environment& env) {
    std::string dir = variable_in(env, "DIRENV_CONFIG");
    if (dir.empty()) {
        const std::string config_home = variable_in(env, "XDG_CONFIG_HOME");
        dir = (config_home.empty() ? home + "/.config" : config_home) + "/direnv";
    }
    dir = absolute_path(dir, home, home);
    const std::string toml = dir + "/direnv.toml";
    return fs.type(toml) == HostFs::Type::missing ? dir + "/config.toml" : toml;
}

}  // namespace

ToolTrust ToolTrust::of_user(const HostFs& fs, const std::string& home, const Environment& env) {
    ToolTrust trust;
    const std::string direnv = fs.read_start(direnv_config(fs, home, env), 1 << 16);
    // direnv expands a leading "~/" only (the path cleaned, as Go's filepath.Join does), and
    // takes an exact entry that names no `.envrc` or `.env` as the folder of an `.envrc`.
    auto expanded = [&](const std::string& path) {
        return path.starts_with("~/") ? absolute_path(path, "/", home) : path;
    };
    for (const auto& p : toml_strings(direnv, "whitelist", "prefix"))
        trust.direnv_prefix.push_back(expanded(p));
    for (const auto& p : toml_strings(direnv, "whitelist", "exact"))
        trust.direnv_exact.push_back(p.ends_with("/.envrc") || p.ends_with("/.env")
                                         ? expanded(p)
                                         : absolute_path(p + "/.envrc", "/", home));
    for (const char* settings : {"/.claude/settings.json", "/.claude.json"})
        trust.all_project_mcp =
            trust.all_project_mcp ||
            json_true(fs.read_start(home + settings, 1 << 20), "enableAllProjectMcpServers");
    return trust;
}

bool ToolTrust::asks_first(const RepositoryRunEntry& entry, const std::string& path) const {
    if (!entry.asks_first) return false;
    const std::string name = name_of(path);
    if (name == ".envrc") {
        // As direnv compares them: the whole path, and a prefix of its text, not of its folders.
        for (const auto& exact : direnv_exact)
            if (exact == path) return false;
        for (const auto& prefix : direnv_prefix)
            if (path.starts_with(prefix)) return false;
    }
    if (name == ".mcp.json" && all_project_mcp) return false;
    return true;
}

std::vector<std::string> envrc_sources(const std::string& dir, const std::string& text) {
    static const std::set<std::string> loaders = {
        "source_env", "source_env_if_exists", "dotenv", "dotenv_if_exists", "source", ".",
        "watch_file"};
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::vector<std::string> words;
        std::string word;
        for (size_t i = start; i <= end; ++i) {
            const char c = i < end ? text[i] : ' ';
            if (c == '#' && word.empty()) break;
            if (c == ' ' || c == '\t' || c == ';' || c == '\r') {
                if (!word.empty()) words.push_back(std::move(word));
                word.clear();
                if (c == ';') break;
            } else if (c != '"' && c != '\'') {
                word += c;
            }
        }
        start = end + 1;
        if (words.empty() || !loaders.count(words[0])) continue;
        if (words.size() == 1 && words[0].starts_with("dotenv")) words.push_back(".env");
        const size_t last =
            words[0] == "watch_file" ? words.size() : std::min<size_t>(2, words.size());
        for (size_t i = 1; i < last; ++i) {
            const std::string& arg = words[i];
            if (arg.find_first_of("$`*?") != std::string::npos || arg.starts_with('-')) continue;
            out.push_back(absolute_path(arg, dir, "/nonexistent-home"));
        }
    }
    return out;
}

std::vector<RepositoryRunEntry> hook_manager_entries(const std::vector<std::string>& hook_texts) {
    auto installed = [&](const char* marker) {
        return std::any_of(hook_texts.begin(), hook_texts.end(), [&](const std::string& text) {
            return text.find(marker) != std::string::npos;
        });
    };
    std::vector<RepositoryRunEntry> out;
    if (installed("pre-commit"))
        out.push_back({".pre-commit-config.yaml", false,
                       "the installed pre-commit hook runs what it names at every commit", false,
                       true});
    if (installed("lefthook")) {
        for (const char* name :
             {"lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml", "lefthook.toml",
              ".lefthook.toml", "lefthook.json", ".lefthook.json", "lefthook-local.yml",
              ".lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yaml",
              ".config/lefthook.yml", ".config/lefthook-local.yml"})
            out.push_back({name, false,
                           "the installed lefthook hook runs what it names at every commit", false,
                           true});
    }
    return out;
}

bool opens_host_run_path(const std::string& path, const std::string& home) {
    // The home's configuration: an entry of the home whose name starts with a dot, or a path in
    // one (a writable root in a folder bound read-only comes back on top of it).
    if (path != home && path_within(path, home) && path[home == "/" ? 1 : home.size() + 1] == '.')
        return true;
    for (const auto& entry : host_run_by_default())
        for (const auto& p : location_paths(entry.where, home, home, {}))
            if (path_within(path, p)) return true;
    for (std::string p = path; p != "/"; p = parent_of(p))
        if (repository_run_entry(name_of(parent_of(p)), name_of(p))) return true;
    return false;
}

std::string describe(HostRunPath::How how) {
    switch (how) {
        case HostRunPath::How::bound:
            return "read-only";
        case HostRunPath::How::sealed:
            return "missing, cannot be made";
        case HostRunPath::How::opened:
            return "writable: sandbox.writable opens it";
        case HostRunPath::How::left_missing:
            return "missing, may be made (its program asks before it runs a new one)";
        case HostRunPath::How::inside:
            return "read-only whole";
        case HostRunPath::How::watched:
            return "missing; one a command makes is moved aside";
    }
    return "";
}

const char* const kHomeConfigurationReason =
    "the home's configuration: every entry of the home whose name starts with a dot";

void protect_home_configuration(SandboxPolicy& policy, const HostFs& fs) {
    if (policy.read_only) return;
    auto home = fs.real_path(policy.home);
    if (!home || fs.type(*home) != HostFs::Type::directory) return;
    const bool holds_home =
        std::any_of(policy.writable.begin(), policy.writable.end(), [&](const std::string& w) {
            auto real = fs.real_path(w);
            return !policy.is_hidden(w) && real && path_within(*home, *real);
        });
    if (!holds_home) return;
    for (const auto& entry : fs.list(*home)) {
        if (!entry.name.starts_with('.')) continue;
        const std::string path = join_path(policy.home, entry.name);
        if (policy.is_hidden(path)) continue;
        if (std::find(policy.writable.begin(), policy.writable.end(), path) !=
            policy.writable.end()) {
            policy.host_run.push_back(
                {path, kHomeConfigurationReason, HostRunPath::How::opened, ""});
            continue;
        }
        if (std::find(policy.protected_paths.begin(), policy.protected_paths.end(), path) ==
            policy.protected_paths.end())
            policy.protected_paths.push_back(path);
        policy.host_run.push_back({path, kHomeConfigurationReason, HostRunPath::How::bound, ""});
    }
    if (std::find(policy.sealed.begin(), policy.sealed.end(), *home) == policy.sealed.end())
        policy.sealed.push_back(*home);
}

namespace {

class Protection {
public:
    Protection(SandboxPolicy& policy, const HostFs& fs, std::vector<HostRunPath> rows)
        : policy_(policy), fs_(fs), out_(std::move(rows)) {
        for (const auto& w : policy.writable)
            if (!policy.is_hidden(w))
                if (auto real = fs.real_path(w)) roots_.push_back(*real);
    }

    // Seals each folder of a writable root above a hidden path that exists: the sandbox rebuilds
    // it with its other entries bound back, so its top is read-only.
    void seal_around_hidden() {
        for (const auto& h : policy_.hidden) {
            if (fs_.type(h) == HostFs::Type::missing) continue;
            auto parent = fs_.real_path(parent_of(h));
            if (!parent) continue;
            for (std::string p = *parent;; p = parent_of(p)) {
                if (in_root(p)) seal(p);
                if (p == "/") break;
            }
        }
    }

    void protect(const std::string& path, const std::string& reason) {
        if (!in_root_lexically(path)) return;
        // In the home's configuration, say, which is read-only whole already.
        if (auto whole = inside_protected(path)) {
            add({path, reason, HostRunPath::How::inside, *whole});
            return;
        }
        if (path != policy_.workspace && std::find(policy_.writable.begin(), policy_.writable.end(),
                                                   path) != policy_.writable.end()) {
            add({path, reason, HostRunPath::How::opened, ""});
            return;
        }
        switch (fs_.type(path)) {
            case HostFs::Type::missing:
                seal_missing(path, reason);
                return;
            case HostFs::Type::symlink: {
                // The link itself could be replaced beside what it leads to: its folder's top
                // stays put, and what it leads to is bound when it lies in a writable root.
                auto parent = fs_.real_path(parent_of(path));
                if (parent && in_root(*parent)) seal(*parent);
                auto target = fs_.real_path(path);
                if (target && in_root(*target)) add_protected(path);
                add({path, reason, HostRunPath::How::bound, ""});
                return;
            }
            default:
                add_protected(path);
                add({path, reason, HostRunPath::How::bound, ""});
        }
    }

    // A work tree's entry: a missing one is never made on the host; one a command makes is
    // the watch's (RepositoryWatch), unless the entry is a hook manager's config, kept from
    // being made.
    void protect_in_work_tree(const std::string& top, const RepositoryRunEntry& entry,
                              const ToolTrust& trust) {
        const std::string path = join_path(top, entry.name);
        if (!in_root_lexically(path)) return;
        if (fs_.type(path) == HostFs::Type::missing && !entry.seal_when_missing &&
            !inside_protected(path)) {
            add({path, entry.reason,
                 trust.asks_first(entry, path) ? HostRunPath::How::left_missing
                                               : HostRunPath::How::watched,
                 ""});
            return;
        }
        protect(path, entry.reason);
    }

    // What an existing `.envrc` sources: bound read-only, or, missing, the watch's.
    void protect_envrc_sources(const std::string& envrc) {
        if (fs_.type(envrc) != HostFs::Type::file) return;
        static const char* const reason =
            "an allowed .envrc loads it; direnv asks only about the .envrc itself";
        for (const auto& path : envrc_sources(parent_of(envrc), fs_.read_start(envrc, 1 << 16))) {
            if (!in_root_lexically(path)) continue;
            if (fs_.type(path) == HostFs::Type::missing && !inside_protected(path))
                add({path, reason, HostRunPath::How::watched, ""});
            else
                protect(path, reason);
        }
    }

    std::vector<HostRunPath> done() { return std::move(out_); }

private:
    // The protected path `path` lies in, below it.
    std::optional<std::string> inside_protected(const std::string& path) const {
        for (const auto& whole : policy_.protected_paths)
            if (path != whole && path_within(path, whole)) return whole;
        return std::nullopt;
    }

    void seal_missing(const std::string& path, const std::string& reason) {
        auto real = fs_.real_path(deepest_existing(fs_, parent_of(path)));
        if (!real || fs_.type(*real) != HostFs::Type::directory || !in_root(*real)) return;
        if (policy_.is_hidden(*real)) return;
        seal(*real);
        add({path, reason, HostRunPath::How::sealed, *real});
    }

    void seal(const std::string& real_dir) {
        if (std::find(policy_.sealed.begin(), policy_.sealed.end(), real_dir) ==
            policy_.sealed.end())
            policy_.sealed.push_back(real_dir);
    }

    void add_protected(const std::string& path) {
        auto& list = policy_.protected_paths;
        if (std::find(list.begin(), list.end(), path) == list.end()) list.push_back(path);
    }

    // A row of the table says better than the principle why a path is read-only.
    void add(HostRunPath p) {
        for (auto& existing : out_)
            if (existing.path == p.path) {
                if (existing.reason == kHomeConfigurationReason && existing.how == p.how)
                    existing.reason = p.reason;
                return;
            }
        out_.push_back(std::move(p));
    }

    bool in_root(const std::string& real) const {
        return std::any_of(roots_.begin(), roots_.end(),
                           [&](const std::string& r) { return path_within(real, r); });
    }

    // In a writable root as written, or once the folders above it are resolved.
    bool in_root_lexically(const std::string& path) const {
        if (path_within(path, "/tmp") || policy_.is_hidden(path)) return false;
        if (std::any_of(policy_.writable.begin(), policy_.writable.end(),
                        [&](const std::string& w) { return path_within(path, w); }))
            return true;
        auto real = fs_.real_path(deepest_existing(fs_, path));
        return real && in_root(*real);
    }

    SandboxPolicy& policy_;
    const HostFs& fs_;
    std::vector<std::string> roots_;
    std::vector<HostRunPath> out_;
};

// "python3.11", "python2.7": a Python's own library folder (Debian's "python3" holds only the
// packages every Python 3 shares, and no user site is named after it).
bool is_python_version(const std::string& name) {
    auto dot = name.find('.');
    auto digits = [&](size_t from, size_t to) {
        return to > from && std::all_of(name.begin() + static_cast<long>(from),
                                        name.begin() + static_cast<long>(to),
                                        [](char c) { return c >= '0' && c <= '9'; });
    };
    return name.starts_with("python") && dot != std::string::npos && digits(6, dot) &&
           digits(dot + 1, name.size());
}

// The user site folders of the Pythons this host has: ~/.local/lib/pythonX.Y/site-packages
// (and the same below $PYTHONUSERBASE), for each pythonX.Y in the system's library folders or
// already in the user's.
std::vector<std::string> python_user_sites(const HostFs& fs, const std::string& home,
                                           const Environment& env) {
    std::vector<std::string> bases = {home + "/.local"};
    const std::string userbase = variable_in(env, "PYTHONUSERBASE");
    if (userbase.starts_with('/')) bases.push_back(absolute_path(userbase, "/", home));
    std::set<std::string> versions;
    std::vector<std::string> dirs = {"/usr/lib", "/usr/local/lib"};
    for (const auto& b : bases) dirs.push_back(b + "/lib");
    for (const auto& dir : dirs)
        for (const auto& entry : fs.list(dir))
            if (is_python_version(entry.name) && entry.type == HostFs::Type::directory)
                versions.insert(entry.name);
    std::vector<std::string> out;
    for (const auto& b : bases)
        for (const auto& v : versions) out.push_back(b + "/lib/" + v + "/site-packages");
    return out;
}

// The start of each installed hook of the git folder `git_dir`, samples left out.
std::vector<std::string> hook_texts(const HostFs& fs, const std::string& git_dir) {
    std::vector<std::string> out;
    for (const auto& entry : fs.list(git_dir + "/hooks"))
        if (entry.type == HostFs::Type::file && !entry.name.ends_with(".sample"))
            out.push_back(fs.read_start(git_dir + "/hooks/" + entry.name, 4096));
    return out;
}

}  // namespace

void protect_host_run_paths(SandboxPolicy& policy, const HostFs& fs, const Environment& env,
                            const std::vector<std::string>& work_trees,
                            const std::vector<std::string>& run_entries, const ToolTrust& trust) {
    if (policy.read_only) return;
    // The rows protect_home_configuration() gave come first, as they were.
    std::vector<HostRunPath> home_rows = std::move(policy.host_run);
    Protection protection(policy, fs, std::move(home_rows));
    protection.seal_around_hidden();
    for (const auto& entry : host_run_by_default())
        for (const auto& path : location_paths(entry.where, policy.home, policy.workspace, env))
            protection.protect(path, entry.reason);
    for (const auto& folder : path_folders(variable_in(env, "PATH")))
        protection.protect(folder, "a folder of your PATH: what is there runs by name");
    for (const auto& site : python_user_sites(fs, policy.home, env))
        protection.protect(site, "Python runs its .pth files and usercustomize.py at every start");
    for (const auto& path : run_entries)
        if (auto* entry = repository_run_entry(name_of(parent_of(path)), name_of(path))) {
            protection.protect(path, entry->reason);
            if (name_of(path) == ".envrc") protection.protect_envrc_sources(path);
        }
    for (const auto& top : work_trees) {
        for (const auto& entry : repository_run_entries())
            protection.protect_in_work_tree(top, entry, trust);
        for (const auto& entry : hook_manager_entries(hook_texts(fs, top + "/.git")))
            protection.protect_in_work_tree(top, entry, trust);
        protection.protect_envrc_sources(top + "/.envrc");
    }
    policy.host_run = protection.done();
}

}  // namespace caretz
