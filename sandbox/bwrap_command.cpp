#include "sandbox/bwrap_command.h"

#include <algorithm>
#include <map>
#include <set>

#include "sandbox/path_names.h"
#include "sandbox/program_run.h"

namespace caretz {

namespace {

class Builder {
public:
    Builder(const SandboxPolicy& policy, const HostFs& fs) : policy_(policy), fs_(fs) {
        for (const auto& h : policy.hidden) {
            if (fs.type(h) == HostFs::Type::missing) continue;
            // Resolve the parent only: a hidden symlink hides the link itself.
            auto parent = fs.real_path(parent_of(h));
            if (!parent) continue;
            std::string real = join_path(*parent, h.substr(h.rfind('/') + 1));
            hidden_.insert(real);
            for (std::string p = real; p != "/";) {
                p = parent_of(p);
                rebuilt_.insert(p);
            }
        }
        if (!policy.read_only) {
            // A writable root inside a hidden path stays hidden: binding it would need its
            // folder made in a parent that is already read-only.
            for (const auto& w : policy.writable)
                if (!policy.is_hidden(w))
                    if (auto real = fs.real_path(w)) writable_.push_back(*real);
            sealed_.insert(policy.sealed.begin(), policy.sealed.end());
            for (const auto& folder : policy.cache_layer.missing) {
                // Made in the rebuilt folder above it that the host has, like a hidden path.
                const std::string above = deepest_existing(fs, parent_of(folder));
                missing_cache_[above].push_back(folder);
                for (std::string p = above; p != "/"; p = parent_of(p)) rebuilt_.insert(p);
            }
        }
        for (const auto& p : policy.protected_paths)
            if (auto real = fs.real_path(p)) protected_real_.push_back(*real);
    }

    std::vector<std::string> build(const std::string& cwd, std::vector<std::string>* copied,
                                   const std::vector<std::string>& in_root) {
        copying_ = copied != nullptr;
        add({"--die-with-parent", "--new-session", "--unshare-user", "--disable-userns",
             "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
             "--unshare-cgroup-try", "--cap-drop", "ALL"});
        rebuild("/");
        for (const auto& w : writable_)
            if (!made_.count(w) && !bound_.count(w)) add({"--bind", w, w});
        // Sealed folders below a writable root's own bind: rebuilt on top of it, shortest
        // first, so a sealed folder inside another is rebuilt with it.
        for (const auto& s : sealed_)
            if (!made_.count(s)) rebuild(s);
        for (const auto& real : protected_real_) {
            // A rebuilt folder's top is read-only, and its entries came back read-only.
            if (made_.count(real) || bound_ro_.count(real) || in_private_copy(real)) continue;
            // A bind mount cannot be renamed or removed (EBUSY), so binding each folder between
            // the writable root and the protected path onto itself keeps `.git` from being moved
            // aside and replaced by one with hooks of the sandbox's choosing.
            for (const auto& w : writable_) {
                if (!path_within(real, w) || real == w) continue;
                std::vector<std::string> between;
                for (std::string a = parent_of(real); a != w && a.size() > w.size();
                     a = parent_of(a))
                    between.push_back(a);
                // A rebuilt folder is held in place already (a mount, or a folder of a read-only
                // tmpfs), and so is each entry bound back into one: a bind of the host's folder
                // there would undo what the rebuild hides or seals.
                for (auto it = between.rbegin(); it != between.rend(); ++it)
                    if (!made_.count(*it) && !made_.count(parent_of(*it)) &&
                        held_.insert(*it).second)
                        add({"--bind", *it, *it});
            }
            add({"--ro-bind", real, real});
        }
        // A writable root inside a read-only folder (a cache named in sandbox.writable, in the
        // home's configuration) comes back on top of it.
        for (const auto& w : writable_)
            if (std::any_of(protected_real_.begin(), protected_real_.end(),
                            [&](const std::string& p) { return w != p && path_within(w, p); }))
                add({"--bind", w, w});
        // The shell's private folders last: one in a folder bound read-only whole would be
        // covered by it.
        if (copied) {
            for (const auto& d : policy_.private_dirs) private_copy(d, *copied);
        }
        // A worktree's `.git` file names its git folder.
        for (const auto& w : writable_) {
            const std::string git = join_path(w, ".git");
            if (fs_.type(git) == HostFs::Type::file) add({"--ro-bind", git, git});
        }
        if (policy_.allow_docker) bind_docker_socket();
        add({"--tmpfs", kRuntimeDir});
        private_cache_folder();
        args_.insert(args_.end(), in_root.begin(), in_root.end());
        add({"--remount-ro", "/", "--chdir", cwd});
        return std::move(args_);
    }

private:
    void add(std::initializer_list<std::string> items) {
        args_.insert(args_.end(), items.begin(), items.end());
    }

    // In a writable root, and not in a path protected there.
    bool writable(const std::string& path) const {
        auto within = [&](const std::string& root) { return path_within(path, root); };
        return std::any_of(writable_.begin(), writable_.end(), within) &&
               std::none_of(protected_real_.begin(), protected_real_.end(), within);
    }

    // In a folder private_copy() gave a copy of, where everything comes back read-only.
    bool in_private_copy(const std::string& real) const {
        if (!copying_) return false;
        for (const auto& d : policy_.private_dirs)
            if (auto dir = fs_.real_path(d.path); dir && path_within(real, *dir) && copies(*dir))
                return true;
        return false;
    }

    // Where the tools' cache variables point when they cannot be layered, and the links of
    // the cache folders the host lacks lead (CacheLayer).
    void private_cache_folder() {
        const CacheLayer& layer = policy_.cache_layer;
        if (layer.variables.empty() && layer.missing.empty()) return;
        add({"--bind", layer.store + "/own", kPrivateCacheDir});
        for (const auto& [variable, value] : layer.variables) add({"--setenv", variable, value});
    }

    // Rebuilds directory `dir` as an empty read-only folder into which every entry but the
    // hidden ones comes back.
    void rebuild(const std::string& dir) {
        const bool root = dir == "/";
        // A folder rebuilt inside a rebuilt one (or in the root) is a plain folder of that
        // one's tmpfs, made read-only with it: the remount of the enclosing tmpfs comes after
        // everything inside. A tmpfs of its own would protect it no better, and its remount
        // would cost bwrap one more pass over the mount table (bench/NOTES.md).
        const bool own_tmpfs = !root && !made_.count(parent_of(dir));
        made_.insert(dir);
        if (root) {
            add({"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
        } else {
            add({own_tmpfs ? "--tmpfs" : "--dir", dir});
        }
        for (const auto& entry : fs_.list(dir)) {
            const std::string path = join_path(dir, entry.name);
            if (hidden_.count(path)) continue;
            if (root && (entry.name == "proc" || entry.name == "dev" || entry.name == "tmp" ||
                         path == kRuntimeDir || path == kHookDir))
                continue;
            if (rebuilt_.count(path) || sealed_.count(path)) {
                rebuild(path);
            } else if (entry.type == HostFs::Type::symlink) {
                add({"--symlink", fs_.read_link(path), path});
            } else {
                const bool write = writable(path);
                add({write ? "--bind-try" : "--ro-bind-try", path, path});
                bound_.insert(path);
                if (!write) bound_ro_.insert(path);
            }
        }
        // bwrap makes the folders between while this folder is still writable.
        for (const auto& folder : missing_cache_[dir])
            add({"--symlink", join_path(kPrivateCacheDir, missing_cache_name(folder)), folder});
        if (own_tmpfs) add({"--remount-ro", dir});
    }

    // A writable tmpfs over `dir.path` with the shell's own files copied in, and everything
    // else bound back read-only: what the shell runs from there, an empty read-only folder
    // where it is missing (SandboxPolicy::private_dirs). A folder that is hidden, inside a
    // writable root or holds one is left alone.
    void private_copy(const PrivateDir& dir, std::vector<std::string>& copied) {
        auto real = fs_.real_path(dir.path);
        if (!real || !copies(*real)) return;
        auto named = [](const std::vector<std::string>& names, const std::string& name) {
            return std::find(names.begin(), names.end(), name) != names.end();
        };
        add({"--tmpfs", *real});
        std::vector<std::string> missing = dir.run_from;
        for (const auto& entry : fs_.list(*real)) {
            const std::string path = join_path(*real, entry.name);
            const bool runs = named(dir.run_from, entry.name);
            // A link the shell runs from that leads to a hidden path: as if it were missing.
            if (entry.type == HostFs::Type::symlink && runs && !visible_target(path)) continue;
            std::erase(missing, entry.name);
            // (No entry is hidden: a folder that holds a hidden path is rebuilt instead.)
            if (entry.type == HostFs::Type::file && named(dir.own_files, entry.name)) {
                add({"--file", std::to_string(kFirstCopiedFileFd + static_cast<int>(copied.size())),
                     path});
                copied.push_back(path);
            } else if (entry.type == HostFs::Type::symlink && !runs) {
                add({"--symlink", fs_.read_link(path), path});
            } else {
                // A mount point: neither written nor removed and made anew (a link would be).
                add({"--ro-bind-try", path, path});
            }
        }
        for (const auto& name : missing) {
            const std::string path = join_path(*real, name);
            add({"--tmpfs", path, "--remount-ro", path});
        }
    }

    // Whether private_copy() copies the folder `real`: not where it is hidden, rebuilt, holds
    // a writable root, or lies in one where the shell's writes land as they always did (only
    // a folder protected there gets a copy).
    bool copies(const std::string& real) const {
        if (fs_.type(real) != HostFs::Type::directory || writable(real) ||
            policy_.is_hidden(real) || rebuilt_.count(real))
            return false;
        return std::none_of(writable_.begin(), writable_.end(),
                            [&](const std::string& w) { return path_within(w, real); });
    }

    // Whether the link at `path` leads somewhere the sandbox may see: binding it shows what it
    // leads to.
    bool visible_target(const std::string& path) const {
        auto target = fs_.real_path(path);
        return target && !policy_.is_hidden(*target) && !hidden_.count(*target);
    }

    // The socket keeps its real host path; when its folder is hidden (`/run`), bwrap creates
    // that folder in the root tmpfs, so it then holds nothing but the socket.
    void bind_docker_socket() {
        if (auto real = fs_.real_path(policy_.docker_socket)) add({"--bind", *real, *real});
    }

    const SandboxPolicy& policy_;
    const HostFs& fs_;
    std::set<std::string> hidden_;
    std::set<std::string> rebuilt_;
    std::set<std::string> bound_;
    std::set<std::string> bound_ro_;  // entries of rebuilt folders bound back read-only
    std::set<std::string> held_;
    std::set<std::string> sealed_;             // SandboxPolicy::sealed, in a writable root
    std::set<std::string> made_;               // folders rebuilt from a tmpfs
    std::vector<std::string> protected_real_;  // the protected paths there are, resolved
    std::vector<std::string> writable_;
    // CacheLayer::missing, by the folder the host has above each (rebuilt, to be made in).
    std::map<std::string, std::vector<std::string>> missing_cache_;
    std::vector<std::string> args_;
    bool copying_ = false;  // the private folders get their copies (build() has `copied`)
};

}  // namespace

std::vector<std::string> bwrap_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                         const std::string& cwd,
                                         std::vector<std::string>* copied_files,
                                         const std::vector<std::string>& in_root) {
    return Builder(policy, fs).build(cwd, copied_files, in_root);
}

std::vector<std::string> path_folders(const std::string& path_variable) {
    std::vector<std::string> folders;
    std::size_t start = 0;
    while (start <= path_variable.size()) {
        std::size_t end = path_variable.find(':', start);
        if (end == std::string::npos) end = path_variable.size();
        std::string folder = path_variable.substr(start, end - start);
        // An empty or relative entry means a folder that depends on the command's cwd.
        if (folder.starts_with('/')) folders.push_back(absolute_path(folder, "/", "/"));
        start = end + 1;
    }
    return folders;
}

std::vector<std::string> run_watch_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                             const WatchedPrograms& programs,
                                             const std::string& stand_in,
                                             const std::string& records) {
    std::vector<std::string> args = {"--bind", records, std::string(kRunRecordsPath)};
    std::vector<std::string> folders = programs.search_dirs;
    folders.insert(folders.end(), std::begin(kSystemProgramDirs), std::end(kSystemProgramDirs));
    std::set<std::string> seen;
    for (const auto& name : programs.names) {
        for (const auto& folder : folders) {
            auto real = fs.real_path(folder + "/" + name);
            // A program the sandbox may write is left alone: a file bound over it could not be
            // replaced or removed.
            if (!real || fs.type(*real) != HostFs::Type::file || policy.is_hidden(*real) ||
                policy.can_write(*real) || !seen.insert(*real).second)
                continue;
            // The real one first, from the host's path, before the stand-in covers that path.
            const std::string kept = std::string(kRealProgramsDir) + "/" + name + *real;
            for (std::string arg :
                 {std::string("--ro-bind"), *real, kept, std::string("--ro-bind"), stand_in, *real})
                args.push_back(std::move(arg));
        }
    }
    return args;
}

}  // namespace caretz
