#include "sandbox/protection/repository_findings.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>

#include "pty/unique_fd.h"
#include "sandbox/path_names.h"
#include "sandbox/protection/git_config_filter.h"
#include "sandbox/protection/watch_parts.h"

namespace caretz {

namespace {

constexpr const char* kAside = ".disabled-by-caretz";

bool write_new_file(const std::string& path, const std::string& text) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd.valid()) return false;
    return ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// A new file beside `path` with `text`, under a name git never reads; "" when it cannot.
std::string save_aside(const std::string& path, const std::string& text) {
    for (int i = 1; i < 100; ++i) {
        std::string aside = path + kAside + (i > 1 ? "-" + std::to_string(i) : "");
        if (write_new_file(aside, text)) return aside;
        if (errno != EEXIST) return "";
    }
    return "";
}

// Replaces the contents of the file at `path`, keeping the file itself.
bool rewrite(const std::string& path, const std::string& text) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC));
    return fd.valid() &&
           ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

}  // namespace

std::string move_aside(const std::string& path) {
    for (int i = 1; i < 100; ++i) {
        std::string aside = path + kAside + (i > 1 ? "-" + std::to_string(i) : "");
        if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE) == 0)
            return aside;
        if (errno != EEXIST) return "";
    }
    return "";
}

const char* to_string(RepositoryFinding::Kind kind) {
    using K = RepositoryFinding::Kind;
    switch (kind) {
        case K::protected_repository:
            return "repository_protected";
        case K::hook_disabled:
            return "hook_disabled";
        case K::config_stripped:
            return "config_stripped";
        case K::config_moved_aside:
            return "config_moved_aside";
        case K::redirect_moved_aside:
            return "commondir_moved_aside";
        case K::not_protected:
            return "not_protected";
        case K::folder_protected:
            return "folder_protected";
        case K::watch_limit:
            return "watch_limit";
        case K::run_entry_moved_aside:
            return "run_entry_moved_aside";
        case K::run_entry_protected:
            return "run_entry_protected";
    }
    return "?";
}

std::string describe(const RepositoryFinding& f) {
    using K = RepositoryFinding::Kind;
    switch (f.kind) {
        case K::protected_repository:
            return "caretz: the git repository " + f.path +
                   " was made or changed in the sandbox; its hooks and config stay read-only "
                   "there from now on";
        case K::hook_disabled:
            return "caretz: a sandboxed command wrote the git hook " + f.path +
                   "; it is moved to " + f.aside + " so git on your machine never runs it";
        case K::config_stripped:
            return "caretz: a sandboxed command wrote the git config " + f.path + " with " +
                   f.detail +
                   "; Caretz kept only what the repository needs and saved the "
                   "original as " +
                   f.aside;
        case K::config_moved_aside:
            return "caretz: a sandboxed command wrote the git config " + f.path +
                   ", which Caretz could not check (" + f.detail +
                   "); it is emptied and the original saved as " + f.aside;
        case K::redirect_moved_aside:
            return "caretz: a sandboxed command wrote " + f.path +
                   ", which sends git to the hooks and config of " + f.detail +
                   ", a folder the sandbox may write; it is moved to " + f.aside;
        case K::not_protected:
            return "caretz: cannot protect " + f.path + " (" + f.detail +
                   "); Caretz checks it again after every command";
        case K::folder_protected:
            return "caretz: cannot search " + f.path +
                   " for git repositories; the sandbox may not write anywhere in it";
        case K::run_entry_moved_aside:
            return "caretz: a sandboxed command made " + f.path + " (" + f.detail +
                   "); it is moved to " + f.aside + " so nothing there runs on your machine";
        case K::run_entry_protected:
            return "caretz: " + f.path + " came with a repository made in the sandbox (" +
                   f.detail +
                   "); it stays read-only there from now on: look at it before you "
                   "open the folder in that program";
        case K::watch_limit:
            return "caretz: the limits on watched folders (fs.inotify.max_user_watches, then "
                   "fs.fanotify.max_user_marks) are reached; " +
                   f.detail +
                   " folders have no watch, so after every command Caretz looks at each of them "
                   "for a change instead, which slows commands down; raise the limits with sysctl";
    }
    return "";
}

void neutralise_git_folder(const std::string& dir, std::vector<RepositoryFinding>& out) {
    using Kind = RepositoryFinding::Kind;
    const std::string hooks = dir + "/hooks";
    if (DIR* d = ::opendir(hooks.c_str())) {
        std::vector<std::string> names;
        while (dirent* e = ::readdir(d)) {
            std::string name = e->d_name;
            if (name == "." || name == ".." || name.ends_with(".sample") ||
                name.find(kAside) != std::string::npos)
                continue;
            names.push_back(name);
        }
        ::closedir(d);
        for (const auto& name : names) {
            const std::string hook = join_path(hooks, name);
            std::string aside = move_aside(hook);
            if (aside.empty())
                out.push_back({Kind::not_protected, hook, "it cannot be moved aside", ""});
            else
                out.push_back({Kind::hook_disabled, hook, "", aside});
        }
    }
    // Rewritten in place: the sandbox has this very file bound read-only, and replacing it
    // on the host would take that mount away with the old file.
    for (const char* sub : {"/config", "/config.worktree"}) {
        const std::string config = dir + sub;
        auto text = read_file(config);
        if (!text || text->empty()) continue;
        auto entries = read_git_config(config);
        std::string kept_text, dropped;
        if (entries) {
            std::vector<GitConfigEntry> kept;
            for (auto& entry : *entries) {
                if (kept_from_sandbox(entry.key))
                    kept.push_back(std::move(entry));
                else if (dropped.find(entry.key) == std::string::npos)
                    dropped += (dropped.empty() ? "" : ", ") + entry.key;
            }
            if (dropped.empty()) continue;
            kept_text = git_config_text(kept);
        }
        std::string aside = save_aside(config, *text);
        if (aside.empty() || !rewrite(config, kept_text)) {
            out.push_back({Kind::not_protected, config, "it cannot be rewritten", ""});
            continue;
        }
        if (entries)
            out.push_back({Kind::config_stripped, config, dropped, aside});
        else
            out.push_back({Kind::config_moved_aside, config,
                           "git cannot read it, or git is not installed", aside});
    }
}

}  // namespace caretz
