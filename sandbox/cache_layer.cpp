#include "sandbox/cache_layer.h"

#include <signal.h>
#include <sys/utsname.h>
#include <sys/xattr.h>

#include <algorithm>
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

std::string work_folder(pid_t instance) {
    return "work." + std::to_string(instance);
}

}  // namespace

std::string cache_store(const std::string& state_dir, const std::string& workspace) {
    return state_dir + "/cache/" + path_key(workspace);
}

std::string cache_store_folder(const std::string& store, const std::string& folder) {
    return store + "/" + path_key(folder);
}

std::vector<OverlayMount> cache_overlays(const CacheLayer& layer, pid_t instance) {
    std::vector<OverlayMount> overlays;
    if (layer.how != CacheLayer::How::overlay) return overlays;
    for (const auto& folder : layer.folders) {
        const std::string own = cache_store_folder(layer.store, folder);
        overlays.push_back({folder, "lowerdir=" + folder + ",upperdir=" + own + "/upper,workdir=" +
                                        own + "/" + work_folder(instance) + ",userxattr"});
    }
    return overlays;
}

std::string overlay_unavailable_reason(const std::string& store_base) {
    utsname name{};
    int major = 0, minor = 0;
    if (::uname(&name) == 0 && std::sscanf(name.release, "%d.%d", &major, &minor) == 2 &&
        (major < 5 || (major == 5 && minor < 11)))
        return std::string("Linux ") + name.release +
               " cannot mount overlayfs in a user namespace (Linux 5.11 and later can)";
    if (::setxattr(store_base.c_str(), "user.caretz.probe", "1", 1, 0) != 0) {
        if (errno == ENOTSUP)
            return "the file system of " + store_base +
                   " keeps no user extended attributes, which the overlay needs";
        if (errno != EEXIST) return "cannot probe " + store_base + ": " + std::strerror(errno);
    }
    ::removexattr(store_base.c_str(), "user.caretz.probe");
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
    if (layer.how == CacheLayer::How::overlay) {
        for (const auto& location : locations) {
            auto real = fs.real_path(location.path);
            // The store may not lie in a folder it is a layer of: the overlay refuses that.
            if (!real || fs.type(*real) != HostFs::Type::directory ||
                writable_already(policy, *real) || !overlay_fits(policy, *real) ||
                path_within(store, *real))
                continue;
            auto& folders = layer.folders;
            if (std::any_of(folders.begin(), folders.end(),
                            [&](const std::string& f) { return path_within(*real, f); }))
                continue;
            std::erase_if(folders, [&](const std::string& f) { return path_within(f, *real); });
            folders.push_back(*real);
        }
    }
    for (const auto& location : locations) {
        if (location.variable.empty() || writable_already(policy, location.path)) continue;
        auto real = fs.real_path(location.path);
        const bool layered =
            std::any_of(layer.folders.begin(), layer.folders.end(), [&](const std::string& f) {
                return path_within(location.path, f) || (real && path_within(*real, f));
            });
        if (!layered)
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

std::string make_cache_store(const CacheLayer& layer, pid_t instance) {
    if (layer.how == CacheLayer::How::none) return "";
    std::error_code error;
    auto make = [&](const std::string& folder) {
        fs::create_directories(folder, error);
        return !error;
    };
    if (!make(layer.store)) return "cannot make " + layer.store + ": " + error.message();
    fs::permissions(layer.store, fs::perms::owner_all, error);
    for (const auto& folder : layer.folders) {
        const std::string own = cache_store_folder(layer.store, folder);
        if (!make(own + "/upper") || !make(own + "/" + work_folder(instance)))
            return "cannot make " + own + ": " + error.message();
    }
    for (const auto& [variable, inside] : layer.variables) {
        const std::string own = layer.store + "/own/" + name_of(inside);
        if (!make(own)) return "cannot make " + own + ": " + error.message();
    }
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
            if (!name.starts_with("work.")) continue;
            const auto pid = static_cast<pid_t>(std::atol(name.c_str() + 5));
            // A process of this user that still runs may still have the overlay mounted.
            if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
            open_folders(it->path());
            std::error_code ignored;
            fs::remove_all(it->path(), ignored);
        }
    }
}

std::string clear_cache_store(const std::string& store) {
    std::error_code error;
    if (!fs::exists(store, error)) return "";
    open_folders(store);
    fs::remove_all(store, error);
    return error ? "cannot empty " + store + ": " + error.message() : "";
}

}  // namespace caretz
