#include "sandbox/cache_layer.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "sandbox/host_fs.h"
#include "sandbox/path_names.h"
#include "sandbox/policy.h"

namespace caretz {

namespace fs = std::filesystem;

namespace {

// One place a tool keeps its cache: `name` is its folder in the store's own folder, `variable`
// the tool's variable that moves it ("" when none moves just the cache).
struct CacheLocation {
    std::string name;
    std::string variable;
    std::string path;
};

std::vector<CacheLocation> cache_locations(const std::string& home, const Environment& env) {
    // A tool takes its variable only as an absolute path (go refuses a relative GOCACHE).
    auto moved = [&](const char* variable, const std::string& otherwise) {
        const std::string value = variable_in(env, variable);
        return value.starts_with('/') ? absolute_path(value, "/", home) : otherwise;
    };
    const std::string xdg = moved("XDG_CACHE_HOME", home + "/.cache");
    const std::string gopath_first =
        variable_in(env, "GOPATH").substr(0, variable_in(env, "GOPATH").find(':'));
    const std::string gopath =
        gopath_first.starts_with('/') ? absolute_path(gopath_first, "/", home) : home + "/go";
    const std::string cargo = moved("CARGO_HOME", home + "/.cargo");
    const std::string gradle = moved("GRADLE_USER_HOME", home + "/.gradle");
    return {
        {"xdg", "XDG_CACHE_HOME", xdg},
        {"go-build", "GOCACHE", moved("GOCACHE", xdg + "/go-build")},
        {"go-mod", "GOMODCACHE", moved("GOMODCACHE", gopath + "/pkg/mod")},
        {"npm", "npm_config_cache", moved("npm_config_cache", home + "/.npm")},
        {"ccache", "CCACHE_DIR", moved("CCACHE_DIR", xdg + "/ccache")},
        {"pip", "PIP_CACHE_DIR", moved("PIP_CACHE_DIR", xdg + "/pip")},
        {"pre-commit", "PRE_COMMIT_HOME", moved("PRE_COMMIT_HOME", xdg + "/pre-commit")},
        {"cargo-registry", "", cargo + "/registry"},
        {"cargo-git", "", cargo + "/git"},
        {"maven", "", home + "/.m2/repository"},
        {"gradle", "", gradle + "/caches"},
    };
}

// The sandbox writes `path` as it is: it lies in a writable root that is not the home or
// above it (there, the home's dot entries stay read-only, caches among them).
bool writable_already(const SandboxPolicy& policy, const std::string& path) {
    return std::any_of(policy.writable.begin(), policy.writable.end(), [&](const std::string& w) {
        return path_within(path, w) && !path_within(policy.home, w);
    });
}

// An overlay can lie over `folder`: nothing hidden is in or above it (the sandbox rebuilds
// those folders), and its path can be written in the overlay's options, which a comma, colon
// or backslash would split.
bool overlay_fits(const SandboxPolicy& policy, const std::string& folder) {
    if (policy.is_hidden(folder) || folder.find_first_of(",:\\") != std::string::npos) return false;
    return std::none_of(policy.hidden.begin(), policy.hidden.end(),
                        [&](const std::string& h) { return path_within(h, folder); });
}

// Missing `path` can be made in the sandbox at no cost: the nearest folder above it that the
// host has is the home itself (no link), which the sandbox rebuilds anyway, since Caretz's
// hidden state folder lies in it. Deeper (~/.cargo/git in an existing ~/.cargo), the folder
// above would have to be rebuilt too, a mount for each of its entries on every start.
bool made_in_home(const HostFs& fs, const std::string& path, const std::string& home) {
    const std::string above = deepest_existing(fs, parent_of(path));
    return above == home && fs.type(above) == HostFs::Type::directory &&
           fs.real_path(above) == above;
}

// FNV-1a: a name for a path that stays the same across builds, unlike std::hash.
std::string path_key(const std::string& path) {
    std::uint64_t hash = 14695981039346656037ULL;
    for (unsigned char c : path) {
        hash ^= c;
        hash *= 1099511628211ULL;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return name_of(path) + "-" + hex;
}

}  // namespace

std::string cache_store(const std::string& state_dir, const std::string& workspace) {
    return state_dir + "/cache/" + path_key(workspace);
}

std::string cache_store_folder(const std::string& store, const std::string& folder) {
    return store + "/" + path_key(folder);
}

std::string missing_cache_name(const std::string& folder) {
    return path_key(folder);
}

std::string cache_upper_folder(const CacheLayer& layer, const std::string& folder) {
    return cache_store_folder(layer.store, folder) + "/" + layer.upper;
}

std::vector<OverlayMount> cache_overlays(const CacheLayer& layer, const std::string& work) {
    std::vector<OverlayMount> overlays;
    if (layer.how != CacheLayer::How::overlay) return overlays;
    for (const auto& folder : layer.folders)
        overlays.push_back({folder, cache_store_folder(layer.store, folder), layer.upper, work});
    return overlays;
}

std::optional<std::string> make_work_folders(const CacheLayer& layer, pid_t instance, bool reused) {
    static std::atomic<unsigned> made{0};
    reused = reused && layer.upper == "upper";
    const std::string work =
        reused ? "work" : "work." + std::to_string(instance) + "." + std::to_string(++made);
    if (layer.how != CacheLayer::How::overlay) return work;
    for (const auto& folder : layer.folders)
        if (::mkdir((cache_store_folder(layer.store, folder) + "/" + work).c_str(), 0700) != 0 &&
            !(reused && errno == EEXIST))
            return std::nullopt;
    return work;
}

std::string overlay_unavailable_reason(const std::string& store_base, bool caretz_own) {
    utsname name{};
    int major = 0, minor = 0;
    if (::uname(&name) == 0 && std::sscanf(name.release, "%d.%d", &major, &minor) == 2 &&
        (major < 5 || (major == 5 && minor < 11)))
        return std::string("Linux ") + name.release +
               " cannot mount overlayfs in a user namespace (Linux 5.11 and later can)";
    // Read, the mark an earlier start left costs no write to the disk.
    const char* mark = "user.caretz.xattrs";
    if (::getxattr(store_base.c_str(), mark, nullptr, 0) >= 0) return "";
    if (::setxattr(store_base.c_str(), mark, "1", 1, 0) != 0) {
        if (errno == ENOTSUP)
            return "the file system of " + store_base +
                   " keeps no user extended attributes, which the overlay needs";
        if (errno != EEXIST) return "cannot probe " + store_base + ": " + std::strerror(errno);
    }
    if (!caretz_own) ::removexattr(store_base.c_str(), mark);
    return "";
}

CacheLayer plan_cache_layer(const SandboxPolicy& policy, const HostFs& fs, const Environment& env,
                            const std::string& store, const std::string& without_overlay) {
    CacheLayer layer;
    if (policy.read_only) return layer;  // plan mode: nothing is writable but /tmp
    layer.store = store;
    layer.without_overlay = without_overlay;
    layer.how = without_overlay.empty() ? CacheLayer::How::overlay : CacheLayer::How::variables;
    const auto locations = cache_locations(policy.home, env);
    // Resolved once: each is a readlink per folder on its path.
    std::vector<std::optional<std::string>> reals;
    for (const auto& location : locations) reals.push_back(fs.real_path(location.path));
    auto layered = [&](const std::string& path) {
        auto within = [&](const std::string& f) { return path_within(path, f); };
        return std::any_of(layer.folders.begin(), layer.folders.end(), within) ||
               std::any_of(layer.missing.begin(), layer.missing.end(), within);
    };
    if (layer.how == CacheLayer::How::overlay) {
        for (size_t i = 0; i < locations.size(); ++i) {
            const auto& real = reals[i];
            const std::string folder = real ? *real : locations[i].path;
            // The store may not lie in a folder it is a layer of: the overlay refuses that.
            if (writable_already(policy, folder) || !overlay_fits(policy, folder) ||
                path_within(store, folder) || layered(folder))
                continue;
            auto& into = real ? layer.folders : layer.missing;
            if (real ? fs.type(*real) != HostFs::Type::directory
                     : !made_in_home(fs, folder, policy.home))
                continue;
            std::erase_if(layer.folders,
                          [&](const std::string& f) { return path_within(f, folder); });
            std::erase_if(layer.missing,
                          [&](const std::string& f) { return path_within(f, folder); });
            into.push_back(folder);
        }
    }
    for (size_t i = 0; i < locations.size(); ++i) {
        const auto& location = locations[i];
        if (location.variable.empty() || writable_already(policy, location.path)) continue;
        const auto& real = reals[i];
        if (!layered(location.path) && !(real && layered(*real)))
            layer.variables[location.variable] = join_path(kPrivateCacheDir, location.name);
    }
    return layer;
}

std::string cache_opened_by(const std::string& root, const std::string& home,
                            const Environment& env) {
    for (const auto& location : cache_locations(home, env))
        if (path_within(root, location.path) || path_within(location.path, root))
            return location.path;
    return "";
}

std::string make_cache_store(const CacheLayer& layer) {
    if (layer.how == CacheLayer::How::none) return "";
    std::error_code error;
    auto make = [&](const std::string& folder) {
        fs::create_directories(folder, error);
        return !error;
    };
    error = make_private_folder(layer.store);
    if (error) return "cannot make " + layer.store + ": " + error.message();
    const std::string own = layer.store + "/own/";
    for (const auto& folder : layer.folders) {
        const std::string upper = cache_upper_folder(layer, folder);
        // What sandboxes wrote while the host lacked the folder starts its upper folder.
        if (layer.upper == "upper" && !fs::exists(upper, error) &&
            make(cache_store_folder(layer.store, folder)))
            fs::rename(own + missing_cache_name(folder), upper, error);
        if (!make(upper)) return "cannot make " + upper + ": " + error.message();
    }
    std::vector<std::string> names;
    for (const auto& folder : layer.missing) names.push_back(missing_cache_name(folder));
    for (const auto& [variable, inside] : layer.variables) names.push_back(name_of(inside));
    for (const auto& name : names)
        if (!make(own + name)) return "cannot make " + own + name + ": " + error.message();
    return "";
}

std::uintmax_t cache_store_size(const std::string& store) {
    std::uintmax_t size = 0;
    std::error_code error;
    // The overlay's work folder is left unreadable by it: skipped.
    for (fs::recursive_directory_iterator
             it(store, fs::directory_options::skip_permission_denied, error),
         end;
         !error && it != end; it.increment(error)) {
        std::error_code ignored;
        if (it->is_regular_file(ignored)) size += it->file_size(ignored);
    }
    return size;
}

namespace {

// Lets the owner into every folder below `folder`: the overlay leaves its work folder without
// permissions, Go's module cache makes its folders read-only, and neither could be emptied.
void open_folders(const fs::path& folder) {
    std::error_code error;
    fs::permissions(folder, fs::perms::owner_all, fs::perm_options::add, error);
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
        if (it->is_directory(error) && !it->is_symlink(error)) open_folders(it->path());
}

}  // namespace

void remove_stale_work_folders(const CacheLayer& layer) {
    for (const auto& folder : layer.folders) {
        std::error_code error;
        for (fs::directory_iterator it(cache_store_folder(layer.store, folder), error), end;
             !error && it != end; it.increment(error)) {
            const std::string name = it->path().filename();
            const size_t dot = name.find('.');
            if (dot == std::string::npos) continue;
            const std::string kind = name.substr(0, dot);
            if (kind != "work" && kind != "upper") continue;
            const auto pid = static_cast<pid_t>(std::atol(name.c_str() + dot + 1));
            // A process of this user that still runs may still have the overlay mounted.
            if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
            // A work folder as its overlay leaves it holds one empty folder, which its own
            // lack of permissions does not keep from being removed: two rmdirs, where opening
            // it first would add two writes of the inodes about to go.
            const std::string path = it->path();
            if (kind == "work" && (::rmdir((path + "/work").c_str()) == 0 || errno == ENOENT) &&
                ::rmdir(path.c_str()) == 0)
                continue;
            open_folders(path);
            std::error_code ignored;
            fs::remove_all(path, ignored);
        }
    }
}

namespace {

// The lock files beside `store` (CacheStoreUse), made when missing.
UniqueFd open_lock(const std::string& store, const char* which) {
    std::error_code ignored;
    fs::create_directories(fs::path(store).parent_path(), ignored);
    const std::string path = store + "." + which + ".lock";
    return UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
}

}  // namespace

std::optional<CacheStoreUse> CacheStoreUse::take(const std::string& store, std::string& problem) {
    CacheStoreUse use;
    use.users_ = open_lock(store, "users");
    use.upper_ = open_lock(store, "upper");
    int taken = -1;
    while (use.users_.valid() && (taken = ::flock(use.users_.get(), LOCK_SH)) != 0 &&
           errno == EINTR) {
    }
    if (taken != 0 || !use.upper_.valid()) {
        problem = "cannot lock " + store + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::flock(use.upper_.get(), LOCK_EX | LOCK_NB) != 0) use.upper_.reset();
    return use;
}

void CacheStoreUse::note_sandbox(pid_t bwrap, pid_t inside) const {
    if (!owns_upper()) return;
    // Of one length every time: the file is written over, never truncated.
    char line[64];
    const int length =
        std::snprintf(line, sizeof line, "%11d %11d %11d\n", static_cast<int>(::getpid()),
                      static_cast<int>(bwrap), static_cast<int>(inside));
    if (length > 0) ::pwrite(upper_.get(), line, static_cast<size_t>(length), 0);
}

void wait_for_upper_writers(const std::string& store, std::chrono::milliseconds longest) {
    const RealHostFs host;
    int owner = 0, bwrap = 0, inside = 0;
    if (std::sscanf(host.read_start(store + ".upper.lock", 64).c_str(), "%d %d %d", &owner, &bwrap,
                    &inside) != 3)
        return;
    const auto deadline = std::chrono::steady_clock::now() + longest;
    for (const int pid : {bwrap, inside}) {
        if (pid <= 0) continue;
        // Held before the name is read, so the name is that of the process waited for.
        const UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
        if (!pidfd.valid()) continue;
        if (host.read_start("/proc/" + std::to_string(pid) + "/comm", 16) != "bwrap\n") continue;
        pollfd ended{pidfd.get(), POLLIN, 0};
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) break;
            if (::poll(&ended, 1, static_cast<int>(left.count())) >= 0 || errno != EINTR) break;
        }
    }
}

std::string clear_cache_store(const std::string& store) {
    const UniqueFd users = open_lock(store, "users");
    if (!users.valid()) return "cannot lock " + store + ": " + std::strerror(errno);
    if (::flock(users.get(), LOCK_EX | LOCK_NB) != 0)
        return errno == EWOULDBLOCK
                   ? "a Caretz session or command of this folder is running and uses its "
                     "private cache layer (" +
                         store +
                         "); end it (or wait for it to end), then run caretz cache clear again"
                   : "cannot lock " + store + ": " + std::strerror(errno);
    std::error_code error;
    if (!fs::exists(store, error)) return "";
    open_folders(store);
    fs::remove_all(store, error);
    return error ? "cannot empty " + store + ": " + error.message() : "";
}

}  // namespace caretz
