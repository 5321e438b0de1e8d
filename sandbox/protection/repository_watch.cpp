#include "sandbox/protection/repository_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_set>

#include "pty/fd_io.h"
#include "sandbox/host_fs.h"
#include "sandbox/path_names.h"
#include "sandbox/protection/git_config_filter.h"
#include "sandbox/protection/host_run_paths.h"

namespace caretz {

namespace {

// Creations and renames are all that can bring a repository, a hook or a redirect: the files
// git reads in a repository Caretz knows of are read-only inside already.
constexpr uint32_t kEvents = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW;
// What the offer's list of changes needs besides (Watching::changes).
constexpr uint32_t kChangeEvents = IN_DELETE | IN_MOVED_FROM | IN_MODIFY | IN_ATTRIB;
// The same for a fanotify mark, folders included.
constexpr uint64_t kMarkEvents = FAN_CREATE | FAN_MOVED_TO | FAN_ONDIR;
constexpr const char* kAside = ".disabled-by-caretz";

// Whether the watches record what commands change (RepositoryWatch::begin_changes).
bool records_changes(RepositoryWatch::Watching watching) {
    return watching == RepositoryWatch::Watching::changes ||
           watching == RepositoryWatch::Watching::changes_if_few;
}

// Whether inotify_add_watch failed because the user's watches are used up.
bool past_watch_limit(int err) {
    return err == ENOSPC || err == ENOMEM;
}

// Whether the kernel keeps the file system's folders itself (ext4, xfs and tmpfs): a folder's
// link count then counts its subfolders, and a file handle from name_to_handle_at is the one a
// fanotify event reports. A FUSE or network file system reports what its server says, btrfs
// and overlayfs one link for every folder.
bool kernel_kept(unsigned long fs_type) {
    switch (fs_type) {
        case EXT4_SUPER_MAGIC:  // ext2, ext3 and ext4 share it
        case XFS_SUPER_MAGIC:
        case TMPFS_MAGIC:
            return true;
    }
    return false;
}

// Whether the kernel itself sets a folder's change time on the file system whenever a name in
// it comes or goes, so that a search record (search_record.h) may rely on it across starts.
bool keeps_change_times(unsigned long fs_type) {
    return kernel_kept(fs_type) || fs_type == BTRFS_SUPER_MAGIC;
}

// A folder's fanotify mark, as its events name it: its file system and its file handle.
std::string mark_key(const __kernel_fsid_t& fsid, const file_handle& handle) {
    std::string key(reinterpret_cast<const char*>(&fsid), sizeof fsid);
    key.append(reinterpret_cast<const char*>(&handle.handle_type), sizeof handle.handle_type);
    key.append(reinterpret_cast<const char*>(handle.f_handle), handle.handle_bytes);
    return key;
}

std::optional<struct stat> lstat_of(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
    return st;
}

// What git itself checks first (setup.c, is_git_directory): HEAD and a place for objects.
bool looks_like_git_dir(const std::string& dir) {
    auto objects = lstat_of(dir + "/objects");
    auto common = lstat_of(dir + "/commondir");
    return lstat_of(dir + "/HEAD") &&
           ((objects && S_ISDIR(objects->st_mode)) || (common && S_ISREG(common->st_mode)));
}

std::optional<std::string> read_file(const std::string& path, size_t limit = 1 << 20) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return std::nullopt;
    std::string text;
    char buf[8192];
    ssize_t n;
    while ((n = ::read(fd.get(), buf, sizeof buf)) > 0) {
        text.append(buf, static_cast<size_t>(n));
        if (text.size() > limit) return std::nullopt;
    }
    return n < 0 ? std::nullopt : std::optional<std::string>(text);
}

bool write_new_file(const std::string& path, const std::string& text) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd.valid()) return false;
    return ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// Renames `path` to a name git never reads, beside it; "" when it cannot.
std::string move_aside(const std::string& path) {
    for (int i = 1; i < 100; ++i) {
        std::string aside = path + kAside + (i > 1 ? "-" + std::to_string(i) : "");
        if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE) == 0)
            return aside;
        if (errno != EEXIST) return "";
    }
    return "";
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

// The file a path in a `.git` file or `commondir` names, relative to `base`.
std::string named_path(std::string text, const std::string& base) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text.starts_with("/") ? text : join_path(base, text);
}

}  // namespace

// Reads the watches' inotify events on a thread of its own, into memory, as they come: a
// command writing many files would otherwise fill the kernel's queue, and events would be
// lost. Between commands it keeps only what a check needs (new entries, and the events of
// watches on single files, which carry no name), so a background job writing its logs costs
// no memory.
class RepositoryWatch::EventReader {
public:
    // Events held at most; past that they are lost, as past the kernel's queue.
    static constexpr size_t kMaxHeld = size_t{32} << 20;

    explicit EventReader(int inotify)
        : inotify_(inotify), stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
        if (stop_.valid()) thread_ = std::thread([this] { run(); });
    }
    ~EventReader() {
        if (!thread_.joinable()) return;
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(stop_.get(), &one, sizeof one);
        thread_.join();
    }

    // Reads what the kernel holds now; from then on every event is kept (`all`), or new
    // entries only.
    void keep_all(bool all) {
        std::lock_guard lock(mutex_);
        read_now();
        keep_all_ = all;
        recorded_from_ = all ? events_.size() : std::string::npos;
    }

    struct Taken {
        std::string events;
        size_t recorded_from;  // where the events kept whole begin in `events`
        bool lost;
    };
    // What was read, after reading what the kernel holds now.
    Taken take() {
        std::lock_guard lock(mutex_);
        read_now();
        Taken taken{std::move(events_), recorded_from_, lost_};
        events_.clear();
        lost_ = false;
        recorded_from_ = keep_all_ ? 0 : std::string::npos;
        return taken;
    }

private:
    void read_now() {
        alignas(inotify_event) char buf[65536];
        ssize_t n;
        while ((n = ::read(inotify_, buf, sizeof buf)) > 0) {
            for (ssize_t at = 0; at < n;) {
                inotify_event ev;
                std::memcpy(&ev, buf + at, sizeof ev);
                const size_t size = sizeof ev + ev.len;
                const bool needed = keep_all_ || ev.len == 0 ||
                                    (ev.mask & (IN_CREATE | IN_MOVED_TO | IN_Q_OVERFLOW));
                if (needed && events_.size() + size > kMaxHeld)
                    lost_ = true;
                else if (needed)
                    events_.append(buf + at, size);
                at += static_cast<ssize_t>(size);
            }
        }
    }

    void run() {
        while (true) {
            pollfd fds[2] = {{inotify_, POLLIN, 0}, {stop_.get(), POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
            if (fds[1].revents) return;
            {
                std::lock_guard lock(mutex_);
                read_now();
            }
            // A moment for the kernel to gather the next events (merging repeated writes to one
            // file): one wake-up for many events, not one for each.
            pollfd stop{stop_.get(), POLLIN, 0};
            if (::poll(&stop, 1, 5) > 0) return;
        }
    }

    const int inotify_;
    UniqueFd stop_;
    std::mutex mutex_;
    std::string events_;
    size_t recorded_from_ = std::string::npos;
    bool keep_all_ = false;
    bool lost_ = false;
    std::thread thread_;
};

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

RepositoryWatch::RepositoryWatch(SandboxPolicy& policy,
                                 const std::vector<std::string>& global_configs, Watching watching,
                                 const std::string& state_dir)
    : home_(policy.home),
      watch_events_(records_changes(watching) ? kEvents | kChangeEvents : kEvents) {
    for (const auto& p : policy.protected_paths) known_.emplace(p, 0);
    for (const auto& h : policy.hidden) {
        hidden_.insert(h);
        if (auto real = resolved_path(h)) hidden_.insert(*real);
    }
    for (const auto& w : policy.writable) {
        auto real = resolved_path(w);
        auto st = real ? lstat_of(*real) : std::nullopt;
        if (!st || !S_ISDIR(st->st_mode) || policy.is_hidden(w)) continue;
        roots_.push_back(*real);
    }
    // A root inside another is searched with it.
    std::erase_if(roots_, [&](const std::string& r) {
        for (const auto& other : roots_)
            if (other != r && path_within(r, other)) return true;
        return false;
    });
    const bool watch_changes = watching != Watching::none;
    if (watch_changes) inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    const std::string no_inotify = inotify_.valid() ? "" : std::strerror(errno);
    if (watch_changes && !inotify_.valid())
        notes_.push_back("caretz: cannot watch the writable folders (inotify: " + no_inotify +
                         "); after every command Caretz looks at each of them for a change "
                         "instead, which slows commands down");
    Found found;
    // The watches come after the start (promote()): until then, change times tell.
    search_at_start(policy, state_dir, found);
    if (records_changes(watching)) {
        if (!inotify_.valid()) {
            unwatchable_ = "the writable folders cannot be watched (inotify: " + no_inotify + ")";
        } else if (watching == Watching::changes_if_few && unwatched_.size() > kFewFolders) {
            inotify_.reset();
            unwatchable_ = "a one-shot caretz exec watches at most " + std::to_string(kFewFolders) +
                           " folders, and the writable folders hold " +
                           std::to_string(unwatched_.size()) + " (the REPL watches them all)";
        } else {
            reader_ = std::make_unique<EventReader>(inotify_.get());
        }
    }
    auto protect = [&](const std::string& path) {
        if (known_.emplace(path, 0).second) policy.protected_paths.push_back(path);
    };
    for (const auto& dir : found.git_dirs) {
        for (const char* sub : {"/hooks", "/config"}) protect(dir + sub);
        for (const char* sub : {"/commondir", "/config.worktree"})
            if (lstat_of(dir + sub)) protect(dir + sub);
    }
    for (const auto& link : found.git_links) protect(link);
    for (const auto& dir : found.unreadable) protect(dir);
    run_entries_ = std::move(found.run_entries);
    run_known_.insert(run_entries_.begin(), run_entries_.end());
    trust_ = ToolTrust::of_user(RealHostFs(), home_);
    for (const auto& path : run_entries_) {
        if (name_of(path) != ".envrc") continue;
        for (const auto& source : envrc_sources(parent_of(path), read_file(path).value_or("")))
            if (!lstat_of(source)) {
                if (auto real = resolved_path(parent_of(source)); real && within_writable(*real))
                    sourced_missing_.push_back(source);
            }
    }
    // The work trees a relative core.hooksPath in the user's own config points into.
    std::vector<std::string> tops;
    for (const auto& dir : found.git_dirs)
        if (name_of(dir) == ".git") tops.push_back(parent_of(dir));
    work_trees_ = tops;
    for (const auto& link : found.git_links)
        if (name_of(link) == ".git") work_trees_.push_back(parent_of(link));
    for (const auto& config : global_configs) {
        protect_named(config, policy);
        follow_config(config, tops, policy, 0);
    }
    for (const auto& dir : found.git_dirs)
        follow_config(dir + "/config", {name_of(dir) == ".git" ? parent_of(dir) : dir}, policy, 0);
    promote();
}

void RepositoryWatch::search_at_start(const SandboxPolicy& policy, const std::string& state_dir,
                                      Found& found) {
    // The record stays where no sandbox can write it: Caretz's state folder is always hidden.
    std::optional<SearchRecordFile> file;
    if (auto real = state_dir.empty() ? std::nullopt : resolved_path(state_dir);
        real && (policy.is_hidden(state_dir) || !within_writable(*real)))
        file = search_record_file(*real, roots_, {hidden_.begin(), hidden_.end()});
    std::optional<SearchRecord> record = file ? read_search_record(*file, roots_) : std::nullopt;
    const bool had_record = record.has_value();
    // A root made again (a fresh clone where the last one was) shares nothing with its record.
    if (record && !std::all_of(roots_.begin(), roots_.end(), [&](const std::string& root) {
            auto st = lstat_of(root);
            return st && std::any_of(record->folders.begin(), record->folders.end(),
                                     [&](const auto& entry) {
                                         return entry.first == root &&
                                                entry.second.dev == st->st_dev &&
                                                entry.second.ino == st->st_ino;
                                     });
        }))
        record.reset();
    const bool recorded = record.has_value();
    bool moved = !recorded;
    if (!recorded) {
        walk(roots_, found, /*parallel=*/true, /*relisting=*/false, /*watch=*/false);
    } else {
        unwatched_ = std::move(record->folders);
        const size_t folders = unwatched_.size();
        std::vector<std::string> gone;
        std::vector<std::string> changed = changed_unwatched(&gone);
        // Written again once more than a sixty-fourth of it moved: until then the next start
        // lists the same few folders again, which costs less than writing the record.
        moved = (changed.size() + gone.size()) * 64 >= folders;

        // What was found in a folder that is the same still holds; a folder that changed is
        // listed again below, and finds again what it still holds.
        std::unordered_set<std::string_view> moved_dirs(changed.begin(), changed.end());
        moved_dirs.insert(gone.begin(), gone.end());
        auto keep = [&](std::vector<std::string>& from, std::vector<std::string>& to,
                        bool by_parent) {
            for (auto& path : from)
                if (!moved_dirs.count(by_parent ? parent_view(path) : std::string_view(path)))
                    to.push_back(std::move(path));
        };
        keep(record->git_dirs, found.git_dirs, false);
        keep(record->git_links, found.git_links, true);
        keep(record->unreadable, found.unreadable, false);
        keep(record->run_entries, found.run_entries, true);
        moved_dirs.clear();
        walk(std::move(changed), found, /*parallel=*/true, /*relisting=*/true, /*watch=*/false);
    }
    // A small tree is searched sooner than its record would be read.
    if (!file || !moved) return;
    // Written while the sandbox starts: nothing changes unwatched_ before finish_recording().
    if (unwatched_.size() >= kRecordedFrom)
        recording_ =
            std::thread([this, file = *file, dirs = found.git_dirs, links = found.git_links,
                         unreadable = found.unreadable, run = found.run_entries] {
                // A FUSE or network file system's change times are what its server says: its
                // folders are listed again at every start.
                std::vector<dev_t> seen, relisted;
                for (const auto& [dir, folder] : unwatched_) {
                    if (std::find(seen.begin(), seen.end(), folder.dev) != seen.end()) continue;
                    seen.push_back(folder.dev);
                    struct statfs fs;
                    if (::statfs(dir.c_str(), &fs) != 0 ||
                        !keeps_change_times(static_cast<unsigned long>(fs.f_type)))
                        relisted.push_back(folder.dev);
                }
                write_search_record(file, unwatched_, {dirs, links, unreadable, run}, relisted);
            });
    else if (had_record)
        ::unlink(file->path.c_str());
}

void RepositoryWatch::finish_recording() {
    if (recording_.joinable()) recording_.join();
}

RepositoryWatch::~RepositoryWatch() {
    finish_recording();
    // What the threads did no longer matters: they only stop.
    if (!promotion_) return;
    promotion_->stop = true;
    for (auto& t : promotion_->threads) t.join();
}

void RepositoryWatch::protect_named(const std::string& path, SandboxPolicy& policy) {
    // The nearest folder that exists decides where the path really lies.
    std::string existing = path;
    while (!lstat_of(existing) && existing != "/") existing = parent_of(existing);
    auto real = resolved_path(existing);
    if (!real || !within_writable(*real)) return;
    // Read-only whole already (the home's configuration): nothing more to do.
    for (const auto& whole : policy.protected_paths)
        if (path_within(existing, whole) || path_within(*real, whole)) return;
    if (existing == path) {
        if (known_.emplace(*real, 0).second) policy.protected_paths.push_back(*real);
        return;
    }
    // Missing: nothing is made on the host (an empty file there would be the protection's
    // footprint); the folder above it is sealed, so the sandbox cannot make it either.
    if (std::find(policy.sealed.begin(), policy.sealed.end(), *real) == policy.sealed.end())
        policy.sealed.push_back(*real);
}

void RepositoryWatch::follow_config(const std::string& config, const std::vector<std::string>& tops,
                                    SandboxPolicy& policy, int depth) {
    // Git follows includes ten deep at most; so does this.
    if (depth > 10) return;
    auto text = read_file(config);
    if (!text) return;
    std::string lower = *text;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // Section and key names are the only places these words can be, and git reads them
    // without regard to case: a config without them can neither include nor name hooks.
    if (lower.find("include") == std::string::npos && lower.find("hookspath") == std::string::npos)
        return;
    auto entries = read_git_config(config);
    if (!entries) return;
    auto expanded = [&](const std::string& value, const std::string& base) {
        if (value == "~" || value.starts_with("~/")) return home_ + value.substr(1);
        return named_path(value, base);
    };
    for (const auto& entry : *entries) {
        if (!entry.value || entry.value->empty()) continue;
        const std::string& key = entry.key;
        if (key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"))) {
            const std::string included = expanded(*entry.value, parent_of(config));
            protect_named(included, policy);
            follow_config(included, tops, policy, depth + 1);
        } else if (key == "core.hookspath") {
            if (entry.value->starts_with("/") || entry.value->starts_with("~")) {
                protect_named(expanded(*entry.value, "/"), policy);
            } else {
                // In the work tree, the hook manager's whole folder: husky's `.husky/_` runs
                // the `.husky/pre-commit` beside it.
                const std::string folder = entry.value->substr(0, entry.value->find('/'));
                for (const auto& top : tops) protect_named(join_path(top, folder), policy);
            }
        }
    }
}

bool RepositoryWatch::within_writable(const std::string& real) const {
    for (const auto& root : roots_)
        if (path_within(real, root)) return true;
    return false;
}

namespace {

// Threads for a search: the machine's cores, four at most.
unsigned search_threads() {
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

// Runs work(0) .. work(n - 1), each on a thread of its own but the first, and waits for all.
void on_threads(unsigned n, const std::function<void(unsigned)>& work) {
    std::vector<std::thread> helpers;
    for (unsigned i = 1; i < n; ++i) helpers.emplace_back(work, i);
    work(0);
    for (auto& t : helpers) t.join();
}

}  // namespace

// The folders still to search, shared by the threads of one walk(). Each thread takes from its
// own stack first and hands half of it over when another thread has nothing to do. The walk
// starts on one thread; the others start once it is clearly not a small tree (a backlog of
// folders, or many folders searched), since a small one is searched sooner than a thread
// starts and joins.
struct RepositoryWatch::FolderQueue {
    struct Item {
        std::shared_ptr<UniqueFd> parent;  // the folder it was listed in (null for a top)
        std::string path;
        size_t name_at = 0;      // where its name starts in path
        bool unwatched = false;  // past the watch limit, its change time noted (not for a top)
    };
    std::mutex mutex;
    std::condition_variable ready;
    std::vector<Item> shared;
    const std::unordered_set<std::string_view>* unwatched = nullptr;
    unsigned threads = 1;                  // the threads searching now
    unsigned max_threads = 1;              // ... and once the helpers have started
    std::function<void(unsigned)> helper;  // what helper i (1 ..) runs
    std::vector<std::thread> helpers;
    std::atomic<bool> helpers_called{false};
    size_t searched = 0;  // folders the first thread searched before the helpers came
    bool watch = false;   // each folder gets its watch as it is found
    unsigned idle = 0;
    std::atomic<unsigned> waiting{0};
    bool done = false;

    // The next folder for a thread whose own stack is empty; false when the walk is over.
    bool take(std::vector<Item>& own) {
        std::unique_lock lock(mutex);
        waiting = ++idle;
        while (shared.empty() && !done) {
            if (idle == threads) {
                done = true;
                ready.notify_all();
                break;
            }
            ready.wait(lock);
        }
        if (shared.empty()) return false;
        waiting = --idle;
        own.push_back(std::move(shared.back()));
        shared.pop_back();
        return true;
    }
    // Called by the searching threads after each folder: until the helpers are called, only
    // the first thread searches, so only it calls them.
    void call_helpers_if_needed(size_t backlog) {
        if (max_threads == 1 || helpers_called.load(std::memory_order_relaxed)) return;
        ++searched;
        if (backlog < 2 || (backlog < 16 && searched < 128)) return;
        helpers_called = true;
        // Held while they start: each helper's first take() counts it idle among all of them.
        std::lock_guard lock(mutex);
        for (unsigned i = 1; i < max_threads; ++i) {
            try {
                helpers.emplace_back(helper, i);
            } catch (const std::system_error&) {
                break;  // no more threads now: the walk goes on with those it has
            }
        }
        threads = 1 + static_cast<unsigned>(helpers.size());
    }
    void share(std::vector<Item>& own) {
        if (waiting.load(std::memory_order_relaxed) == 0 || own.size() < 2) return;
        std::lock_guard lock(mutex);
        const auto half = static_cast<long>(own.size() / 2);
        std::move(own.begin(), own.begin() + half, std::back_inserter(shared));
        own.erase(own.begin(), own.begin() + half);
        ready.notify_all();
    }
};

void RepositoryWatch::Found::merge(Found&& other) {
    auto append = [](auto& to, auto& from) {
        if (to.empty()) {
            to.swap(from);
            return;
        }
        to.reserve(to.size() + from.size());
        std::move(from.begin(), from.end(), std::back_inserter(to));
    };
    append(git_dirs, other.git_dirs);
    append(git_links, other.git_links);
    append(unreadable, other.unreadable);
    append(run_entries, other.run_entries);
    append(watches, other.watches);
    append(marks, other.marks);
    limit = limit || other.limit;
    append(unwatched, other.unwatched);
}

std::vector<std::string> RepositoryWatch::changed_unwatched(std::vector<std::string>* gone) {
    if (unwatched_.empty()) return {};
    // Each thread looks at its share of the list; nothing changes the list meanwhile.
    const size_t total = unwatched_.size();
    const unsigned threads = total < 4096 ? 1 : search_threads();
    std::vector<char> moved(total);  // 1: changed, 2: gone
    on_threads(threads, [&](unsigned t) {
        // Each folder looked up in its parent, which the one before usually shares (a folder's
        // subfolders are next to each other in the list): one name looked up, not the whole
        // path. The parent is opened as lstat() would walk to it.
        std::string_view parent;
        UniqueFd parent_fd;
        for (size_t i = total * t / threads; i < total * (t + 1) / threads; ++i) {
            const auto& [dir, seen] = unwatched_[i];
            const std::string_view up = parent_view(dir);
            const size_t slash = dir.rfind('/');
            if (up != parent) {
                parent = up;
                parent_fd.reset(::open(std::string(up).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            }
            struct stat st;
            const int looked =
                parent_fd.valid()
                    ? ::fstatat(parent_fd.get(), dir.c_str() + slash + 1, &st, AT_SYMLINK_NOFOLLOW)
                    : ::lstat(dir.c_str(), &st);
            if (looked != 0 || !S_ISDIR(st.st_mode))
                moved[i] = 2;
            else if (seen.racy || !seen.same(st))
                moved[i] = 1;
        }
    });
    std::vector<std::string> changed;
    size_t kept = 0;
    for (size_t i = 0; i < total; ++i) {
        if (moved[i] == 1) changed.push_back(std::move(unwatched_[i].first));
        if (moved[i] == 2 && gone) gone->push_back(std::move(unwatched_[i].first));
        if (moved[i] == 0 && kept != i) unwatched_[kept] = std::move(unwatched_[i]);
        if (moved[i] == 0) ++kept;
    }
    unwatched_.resize(kept);
    return changed;
}

void RepositoryWatch::promote() {
    if (!inotify_.valid() || limit_reached_ ||
        std::all_of(unwatched_.begin(), unwatched_.end(),
                    [](const auto& entry) { return entry.second.racy; }))
        return;
    const size_t total = unwatched_.size();
    const unsigned threads = total < 4096 ? 1 : search_threads();
    promotion_ = std::make_unique<Promotion>();
    promotion_->parts.resize(threads);
    for (unsigned t = 0; t < threads; ++t)
        promotion_->threads.emplace_back([this, total, threads, t, &p = *promotion_] {
            Promotion::Part& part = p.parts[t];
            for (size_t i = total * t / threads;
                 i < total * (t + 1) / threads && !p.stop.load(std::memory_order_relaxed); ++i) {
                const auto& [dir, seen] = unwatched_[i];
                if (seen.racy) continue;  // listed again at the next check
                FolderWatch watch = watch_folder(dir);
                if (watch.exhausted) {
                    part.limit = true;
                    p.stop = true;  // the other threads would meet the limits too
                    break;
                }
                if (watch.wd >= 0)
                    part.watched.emplace_back(watch.wd, i);
                else if (!watch.key.empty())
                    part.marked.emplace_back(std::move(watch.key), i);
                else
                    continue;  // gone, or no folder now: its change time tells
                // Changed between its listing and its watch: listed again at the next check.
                struct stat st;
                if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !seen.same(st))
                    part.changed.push_back(i);
            }
        });
}

void RepositoryWatch::finish_promoting() {
    if (!promotion_) return;
    for (auto& t : promotion_->threads) t.join();
    const auto p = std::move(promotion_);
    std::vector<char> keep(unwatched_.size(), 1);
    for (const auto& part : p->parts) {
        for (const auto& [wd, i] : part.watched) {
            watched_[wd] = unwatched_[i].first;
            keep[i] = 0;
        }
        for (const auto& [key, i] : part.marked) {
            marked_[key] = unwatched_[i].first;
            keep[i] = 0;
        }
        for (size_t i : part.changed) {
            unwatched_[i].second.racy = true;
            keep[i] = 1;
        }
        if (part.limit) limit_reached_ = true;
    }
    size_t kept = 0;
    for (size_t i = 0; i < unwatched_.size(); ++i)
        if (keep[i] && kept++ != i) unwatched_[kept - 1] = std::move(unwatched_[i]);
    unwatched_.resize(kept);
}

void RepositoryWatch::walk(std::vector<std::string> tops, Found& found, bool parallel,
                           bool relisting, bool watch) {
    std::sort(tops.begin(), tops.end());
    tops.erase(std::unique(tops.begin(), tops.end()), tops.end());
    if (tops.empty()) return;
    FolderQueue queue;
    queue.max_threads = parallel ? search_threads() : 1;
    queue.watch = watch && inotify_.valid();
    // The folders without a watch already known, which the walk leaves to their change time:
    // those in the tops. One deeper down is met only in a folder that is not known either (new,
    // changed or watched), and is listed then: leaving fewer folders to their change time only
    // lists more, never less.
    std::unordered_set<std::string_view> known;
    if (relisting) {
        std::unordered_set<std::string_view> listed(tops.begin(), tops.end());
        for (const auto& entry : unwatched_)
            if (listed.count(parent_view(entry.first))) known.insert(entry.first);
        // A top in another top is listed there, being no folder known already.
        std::vector<char> inside(tops.size());
        for (size_t i = 0; i < tops.size(); ++i)
            inside[i] = listed.count(parent_view(tops[i])) != 0;
        listed.clear();
        size_t kept = 0;
        for (size_t i = 0; i < tops.size(); ++i)
            if (!inside[i] && kept++ != i) tops[kept - 1] = std::move(tops[i]);
        tops.resize(kept);
    }
    if (!known.empty()) queue.unwatched = &known;
    for (auto& top : tops) queue.shared.push_back({nullptr, std::move(top), 0});
    std::vector<Found> each(queue.max_threads);
    queue.helper = [&](unsigned t) { walk_folders(queue, each[t]); };
    queue.helper(0);
    for (auto& t : queue.helpers) t.join();
    for (auto& part : each) found.merge(std::move(part));
    // In the order of the folders, whichever thread found them.
    for (auto* list : {&found.git_dirs, &found.git_links, &found.unreadable, &found.run_entries})
        std::sort(list->begin(), list->end());
    for (auto& [wd, dir] : found.watches) watched_[wd] = dir;  // a folder moved keeps its wd
    for (auto& [key, dir] : found.marks) marked_[key] = dir;   // and its mark
    if (found.limit) limit_reached_ = true;
    if (unwatched_.empty()) {
        unwatched_.swap(found.unwatched);
    } else {
        unwatched_.reserve(unwatched_.size() + found.unwatched.size());
        std::move(found.unwatched.begin(), found.unwatched.end(), std::back_inserter(unwatched_));
    }
    found.watches.clear();
    found.marks.clear();
    found.unwatched.clear();
}

// Whether the file system of `fd` counts a folder's subfolders in its link count, so that a
// folder with two links has none.
bool counts_subfolders(int fd) {
    struct statfs fs;
    return ::fstatfs(fd, &fs) == 0 && kernel_kept(static_cast<unsigned long>(fs.f_type));
}

// By its path: inotify has no *at call.
RepositoryWatch::FolderWatch RepositoryWatch::watch_folder(const std::string& dir) const {
    int wd = ::inotify_add_watch(inotify_.get(), dir.c_str(), watch_events_);
    if (wd >= 0 || !past_watch_limit(errno)) return {wd, "", false};
    return add_mark(dir);
}

bool RepositoryWatch::add_watch(const std::string& dir, Found& found) const {
    FolderWatch watch = watch_folder(dir);
    if (watch.wd >= 0) found.watches.emplace_back(watch.wd, dir);
    if (!watch.key.empty()) found.marks.emplace_back(std::move(watch.key), dir);
    if (watch.exhausted) found.limit = true;
    return !watch.exhausted;
}

RepositoryWatch::FolderWatch RepositoryWatch::add_mark(const std::string& dir) const {
    // One fanotify group, made when the first folder needs it: a user has 128 at most.
    std::call_once(fanotify_made_, [this] {
        fanotify_.reset(::fanotify_init(
            FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_NONBLOCK | FAN_CLOEXEC, O_RDONLY));
    });
    // The handle and the mark both from one descriptor, so both are of the same folder.
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return {};  // gone, or no folder now
    // Anything else that fails would fail for the next folder too: without fanotify (only
    // root has it before Linux 5.13), past the marks' limit, or on a file system whose
    // handles might not be those the events report.
    struct statfs fs;
    alignas(file_handle) unsigned char buffer[sizeof(file_handle) + MAX_HANDLE_SZ];
    auto* handle = reinterpret_cast<file_handle*>(buffer);
    handle->handle_bytes = MAX_HANDLE_SZ;
    int mount_id;
    if (!fanotify_.valid() || ::fstatfs(fd.get(), &fs) != 0 ||
        !kernel_kept(static_cast<unsigned long>(fs.f_type)) ||
        ::name_to_handle_at(fd.get(), "", handle, &mount_id, AT_EMPTY_PATH) != 0 ||
        ::fanotify_mark(fanotify_.get(), FAN_MARK_ADD | FAN_MARK_ONLYDIR, kMarkEvents, fd.get(),
                        nullptr) != 0)
        return {-1, "", true};
    __kernel_fsid_t fsid;
    static_assert(sizeof fsid == sizeof fs.f_fsid);
    std::memcpy(&fsid, &fs.f_fsid, sizeof fsid);
    return {-1, mark_key(fsid, *handle), false};
}

// Records the change time of a folder without a watch, for a later check.
void RepositoryWatch::note_unwatched(const std::string& dir, const struct stat& st, Found& found) {
    timespec now;
    ::clock_gettime(CLOCK_REALTIME, &now);
    // A change within the same tick of the file system's clock would leave the time as it
    // is: a time that recent is listed again at the next check.
    found.unwatched.push_back(
        {dir, Unwatched{st.st_dev, st.st_ino, st.st_ctim, now.tv_sec - st.st_ctim.tv_sec < 2}});
}

void RepositoryWatch::walk_folders(FolderQueue& queue, Found& found) const {
    std::vector<char> listing(32768);  // getdents64's buffer
    std::vector<FolderQueue::Item> own;
    std::vector<FolderQueue::Item> children;
    std::vector<std::pair<dev_t, bool>> counting;  // file systems seen: counts_subfolders()
    while (!own.empty() || queue.take(own)) {
        FolderQueue::Item item = std::move(own.back());
        own.pop_back();
        const std::string& dir = item.path;
        // The watch comes before the listing: what is made after it is an event, what was
        // there before is listed. A folder found in a listing had its watch, or its change
        // time noted, there already.
        const bool top = !item.parent;
        bool unwatched = item.unwatched;
        if (top) unwatched = !queue.watch || !add_watch(dir, found);
        // Opened from the folder it was listed in: no walk down the whole path again.
        const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
        auto fd = std::make_shared<UniqueFd>(
            item.parent ? ::openat(item.parent->get(), dir.c_str() + item.name_at, flags)
                        : ::open(dir.c_str(), flags));
        if (!fd->valid() && errno == EMFILE) fd->reset(::open(dir.c_str(), flags));
        item.parent.reset();
        // Gone or replaced since it was listed: its folder's change time moved. Anything
        // else leaves it unsearched, so it is protected whole.
        if (!fd->valid()) {
            if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                found.unreadable.push_back(dir);
            continue;
        }
        struct stat self;
        if (::fstat(fd->get(), &self) != 0) {
            found.unreadable.push_back(dir);
            continue;
        }
        // Without a watch, the folder's change time tells a later check whether to list it
        // again; taken before the listing, so a change during it shows as a newer one.
        if (unwatched && top) note_unwatched(dir, self, found);
        auto seen = std::find_if(counting.begin(), counting.end(),
                                 [&](const auto& c) { return c.first == self.st_dev; });
        if (seen == counting.end())
            seen = counting.insert(counting.end(), {self.st_dev, counts_subfolders(fd->get())});
        const bool leaves_known = seen->second;
        bool head = false, objects = false, commondir = false;
        const std::string_view folder_name = std::string_view(dir).substr(dir.rfind('/') + 1);
        // getdents64 itself: readdir() would cost three more system calls per folder.
        ssize_t n;
        while ((n = ::getdents64(fd->get(), listing.data(), listing.size())) > 0) {
            for (ssize_t at = 0; at < n;) {
                auto* e = reinterpret_cast<dirent64*>(listing.data() + at);
                at += e->d_reclen;
                const char* name = e->d_name;
                if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
                if (repository_run_entry(folder_name, name))
                    found.run_entries.push_back(join_path(dir, name));
                unsigned char type = e->d_type;
                if (type == DT_UNKNOWN) {
                    struct stat st;
                    if (::fstatat(fd->get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
                    type = S_ISDIR(st.st_mode)   ? DT_DIR
                           : S_ISLNK(st.st_mode) ? DT_LNK
                           : S_ISREG(st.st_mode) ? DT_REG
                                                 : DT_UNKNOWN;
                }
                if (type == DT_DIR) {
                    if (std::strcmp(name, "objects") == 0) objects = true;
                    std::string path = join_path(dir, name);
                    // A folder without a watch that is known already is looked at by its own
                    // change time.
                    if (!hidden_.count(path) && !(queue.unwatched && queue.unwatched->count(path)))
                        children.push_back({fd, std::move(path), dir.size() + 1});
                } else if (std::strcmp(name, "HEAD") == 0) {
                    head = true;
                } else if (std::strcmp(name, "commondir") == 0 && type == DT_REG) {
                    commondir = true;
                } else if (std::strcmp(name, ".git") == 0 && (type == DT_REG || type == DT_LNK)) {
                    found.git_links.push_back(join_path(dir, name));
                }
            }
        }
        if (n < 0) found.unreadable.push_back(dir);
        const bool git_dir = head && (objects || commondir);
        if (git_dir) found.git_dirs.push_back(dir);
        for (auto& child : children) {
            const char* name = child.path.c_str() + child.name_at;
            // Git never looks for a repository among the object files: no need to search
            // the 256 folders there.
            if (git_dir && std::strcmp(name, "objects") == 0) continue;
            // The watch, then the change time, then what is in it, as for the folder above.
            child.unwatched = !queue.watch || !add_watch(child.path, found);
            struct stat st;
            if (::fstatat(fd->get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
                continue;
            if (child.unwatched) note_unwatched(child.path, st, found);
            // A folder without subfolders needs no listing of its own: what it can hold that
            // matters, a `.git` file or link or a HEAD, is looked up by name.
            if (leaves_known && st.st_nlink == 2 && st.st_dev == self.st_dev &&
                search_leaf(fd->get(), name, child.path, found))
                continue;
            own.push_back(std::move(child));
        }
        children.clear();
        queue.call_helpers_if_needed(own.size());
        queue.share(own);
    }
}

bool RepositoryWatch::search_leaf(int parent, const char* name, const std::string& path,
                                  Found& found) {
    std::string probe = std::string(name) + "/.git";
    struct stat st;
    if (::fstatat(parent, probe.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode)) return false;  // made since: listed
        if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) found.git_links.push_back(path + "/.git");
    } else if (errno == EACCES || errno == EPERM) {
        found.unreadable.push_back(path);
        return true;
    } else if (errno != ENOENT) {
        return false;
    }
    probe.replace(probe.size() - 4, 4, "HEAD");
    // A git folder without subfolders (a worktree's: HEAD and commondir) is listed.
    return ::fstatat(parent, probe.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
}

void RepositoryWatch::read_events(std::set<std::string>& candidates,
                                  std::vector<std::string>& new_dirs, bool& overflow) {
    if (reader_) {
        EventReader::Taken taken = reader_->take();
        if (taken.lost) {
            overflow = true;
            if (record_open_)
                record_.incomplete("more events came than Caretz holds in memory (" +
                                   std::to_string(EventReader::kMaxHeld >> 20) + " MiB)");
        }
        take_events(taken.events, taken.recorded_from, candidates, new_dirs, overflow);
        return;
    }
    alignas(inotify_event) char buf[65536];
    ssize_t n;
    while ((n = ::read(inotify_.get(), buf, sizeof buf)) > 0)
        take_events(std::string_view(buf, static_cast<size_t>(n)), std::string::npos, candidates,
                    new_dirs, overflow);
}

void RepositoryWatch::take_events(std::string_view events, size_t recorded_from,
                                  std::set<std::string>& candidates,
                                  std::vector<std::string>& new_dirs, bool& overflow) {
    // A rename's two events share a cookie; one moved out of the watched folders has no second.
    std::unordered_map<uint32_t, std::pair<std::string, bool>> moved_out;
    for (size_t at = 0; at + sizeof(inotify_event) <= events.size();) {
        inotify_event ev;
        std::memcpy(&ev, events.data() + at, sizeof ev);
        const char* name = events.data() + at + sizeof ev;
        const bool recorded = record_open_ && at >= recorded_from;
        at += sizeof ev + ev.len;
        if (at > events.size()) break;
        if (ev.mask & IN_Q_OVERFLOW) {
            overflow = true;
            if (recorded)
                record_.incomplete(
                    "events were lost: more came than the kernel queues "
                    "(fs.inotify.max_queued_events)");
            continue;
        }
        if (auto config = config_watches_.find(ev.wd); config != config_watches_.end()) {
            // Written through a descriptor opened before it was protected.
            recheck_.insert(parent_of(config->second));
            if (ev.mask & IN_IGNORED) config_watches_.erase(config);
            continue;
        }
        auto it = watched_.find(ev.wd);
        if (it == watched_.end()) continue;
        if (ev.mask & IN_IGNORED) {
            watched_.erase(it);
            continue;
        }
        if (ev.len == 0) continue;
        const std::string entry(name, ::strnlen(name, ev.len));
        const bool folder = ev.mask & IN_ISDIR;
        if (ev.mask & (IN_CREATE | IN_MOVED_TO))
            on_new_entry(it->second, entry, folder, candidates, new_dirs);
        if (!recorded) continue;
        std::string path = join_path(it->second, entry);
        if (ev.mask & IN_CREATE) {
            record_.made(path, folder);
        } else if (ev.mask & IN_MOVED_FROM) {
            moved_out[ev.cookie] = {std::move(path), folder};
        } else if (ev.mask & IN_MOVED_TO) {
            auto from = moved_out.find(ev.cookie);
            if (from == moved_out.end()) {
                record_.made(path, folder);  // moved in from a folder without a watch
            } else {
                record_.renamed(from->second.first, path, folder);
                moved_out.erase(from);
            }
        } else if (ev.mask & IN_DELETE) {
            record_.removed(path, folder);
        } else if (ev.mask & (IN_MODIFY | IN_ATTRIB)) {
            record_.written(path, folder);
        }
    }
    for (const auto& [cookie, from] : moved_out) record_.removed(from.first, from.second);
}

void RepositoryWatch::read_mark_events(std::set<std::string>& candidates,
                                       std::vector<std::string>& new_dirs, bool& overflow) {
    if (!fanotify_.valid()) return;
    alignas(fanotify_event_metadata) char buf[65536];
    ssize_t n;
    while ((n = ::read(fanotify_.get(), buf, sizeof buf)) > 0) {
        // The kernel packs events, and the records in them, one after the other at any byte
        // (a record's length follows its name): each is copied to aligned memory before its
        // fields are read.
        const size_t size = static_cast<size_t>(n);
        for (size_t offset = 0; offset + sizeof(fanotify_event_metadata) <= size;) {
            fanotify_event_metadata ev;
            std::memcpy(&ev, buf + offset, sizeof ev);
            if (ev.event_len < sizeof ev || offset + ev.event_len > size) break;
            const char* at = buf + offset + ev.metadata_len;
            const char* end = buf + offset + ev.event_len;
            offset += ev.event_len;
            if (ev.fd >= 0) ::close(ev.fd);  // none is opened when handles are reported
            if (ev.vers != FANOTIFY_METADATA_VERSION || (ev.mask & FAN_Q_OVERFLOW)) {
                overflow = true;
                continue;
            }
            while (at + sizeof(fanotify_event_info_header) <= end) {
                fanotify_event_info_header header;
                std::memcpy(&header, at, sizeof header);
                if (header.len == 0 || at + header.len > end) break;
                alignas(fanotify_event_info_fid) char
                    record[sizeof(fanotify_event_info_fid) + MAX_HANDLE_SZ + NAME_MAX];
                if (header.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME &&
                    header.len < sizeof record) {
                    std::memcpy(record, at, header.len);
                    auto* info = reinterpret_cast<const fanotify_event_info_fid*>(record);
                    auto* handle = reinterpret_cast<const file_handle*>(info->handle);
                    // The entry's name follows the handle, up to its NUL or the record's end.
                    const size_t name_at =
                        static_cast<size_t>(reinterpret_cast<const char*>(info->handle) - record) +
                        sizeof(file_handle) + handle->handle_bytes;
                    auto folder = marked_.find(mark_key(info->fsid, *handle));
                    if (folder != marked_.end() && name_at < header.len)
                        on_new_entry(folder->second,
                                     std::string(record + name_at,
                                                 ::strnlen(record + name_at, header.len - name_at)),
                                     ev.mask & FAN_ONDIR, candidates, new_dirs);
                }
                at += header.len;
            }
        }
    }
}

void RepositoryWatch::on_new_entry(const std::string& dir, const std::string& name, bool folder,
                                   std::set<std::string>& candidates,
                                   std::vector<std::string>& new_dirs) {
    if (folder) new_dirs.push_back(join_path(dir, name));
    if (name == ".git") candidates.insert(join_path(dir, name));
    if (repository_run_entry(name_of(dir), name)) made_run_entries_.insert(join_path(dir, name));
    // A file git reads in a git folder, or a new entry in one's hooks.
    if (name == "HEAD" || name == "objects" || name == "commondir" || name == "config" ||
        name == "config.worktree" || name == "hooks")
        candidates.insert(dir);
    if (name_of(dir) == "hooks") {
        candidates.insert(parent_of(dir));
        recheck_.insert(parent_of(dir));
    }
}

void RepositoryWatch::attach(const void* owner, Protector protect) {
    sandboxes_.emplace_back(owner, std::move(protect));
}

void RepositoryWatch::detach(const void* owner) {
    std::erase_if(sandboxes_, [&](const auto& s) { return s.first == owner; });
}

bool RepositoryWatch::is_known(const std::string& path) const {
    auto it = known_.find(path);
    if (it == known_.end()) return false;
    // Protected from the start, with the folders above it held in place by the sandbox; later
    // ones must still be the same file: a repository moved away and made again is new.
    if (it->second == 0) return true;
    auto st = lstat_of(path);
    return st && st->st_ino == it->second;
}

void RepositoryWatch::protect_now(const std::string& path) {
    auto st = lstat_of(path);
    known_[path] = st ? st->st_ino : 0;
    read_only_now_.push_back(path);
    added_.push_back(path);
}

std::vector<RepositoryFinding> RepositoryWatch::check() {
    // The watches the start left for later are all there first: comparing the change times of
    // the folders still without one would cost each check more than adding them costs once.
    finish_recording();
    finish_promoting();
    std::vector<RepositoryFinding> out = checked();
    if (limit_reached_ && !limit_told_ && !unwatched_.empty()) {
        limit_told_ = true;
        out.push_back({RepositoryFinding::Kind::watch_limit, roots_.front(),
                       std::to_string(unwatched_.size()), ""});
    }
    promote();
    return out;
}

void RepositoryWatch::exit_follows() {
    if (!inotify_.valid()) return;  // and then there are no marks either
    reader_.reset();
    finish_promoting();
    int alive[2];
    if (::pipe2(alive, O_CLOEXEC) != 0) return;
    const int marks = fanotify_.valid() ? fanotify_.get() : inotify_.get();
    const pid_t keeper = ::fork();
    if (keeper == 0) {
        // 0 and 1 the watches, 2 the pipe: nothing else stays open here, so a pipe downstream
        // of Caretz sees its end.
        if (!arrange_fds({inotify_.get(), marks, alive[0]}, {0, 1, 2})) ::_exit(1);
        char byte;
        while (::read(2, &byte, 1) < 0 && errno == EINTR) {
        }
        ::_exit(0);  // the end of file: Caretz has exited, and this closes the last descriptors
    }
    ::close(alive[0]);
    // The write end stays open until Caretz exits.
    if (keeper < 0) ::close(alive[1]);
}

void RepositoryWatch::begin_changes() {
    if (!reader_) {
        // Nothing can be seen: the offer says so, rather than that nothing changed.
        if (unwatchable_.empty()) return;
        record_ = ChangeRecord();
        record_.incomplete(unwatchable_);
        record_open_ = true;
        return;
    }
    finish_promoting();
    // A folder that changed while it was listed has no watch until the next check lists it
    // again; it gets one now, so that what the command does in it shows. It stays to be
    // listed again.
    size_t missing = 0;
    for (const auto& [dir, seen] : unwatched_) {
        if (!seen.racy || limit_reached_) {
            ++missing;
            continue;
        }
        FolderWatch watch = watch_folder(dir);
        if (watch.wd >= 0) {
            watched_[watch.wd] = dir;
        } else if (!watch.key.empty()) {
            marked_[watch.key] = dir;
        } else if (watch.exhausted) {
            limit_reached_ = true;
            ++missing;
        }
    }
    record_ = ChangeRecord();
    record_open_ = true;
    reader_->keep_all(true);
    if (missing)
        record_.incomplete(std::to_string(missing) +
                           (missing == 1 ? " folder has" : " folders have") +
                           " no watch (the watch limits are reached)");
    else if (!marked_.empty())
        record_.incomplete(std::to_string(marked_.size()) +
                           " folders past the inotify watch limit show new entries only");
}

std::optional<ChangeList> RepositoryWatch::end_changes() {
    if (!record_open_) return std::nullopt;
    record_open_ = false;
    if (reader_) reader_->keep_all(false);
    return record_.list();
}

void RepositoryWatch::record_made_folders() {
    // By index: listing a folder adds the folders in it.
    for (size_t i = 0; i < record_.made_folders().size() && !record_.full(); ++i) {
        const std::string dir = record_.made_folders()[i];
        DIR* d = ::opendir(dir.c_str());
        if (!d) continue;  // gone again, or renamed: its new name is listed as made too
        while (dirent* e = ::readdir(d)) {
            const std::string_view name = e->d_name;
            if (name == "." || name == "..") continue;
            const std::string path = join_path(dir, e->d_name);
            if (hidden_.count(path)) continue;
            bool folder = e->d_type == DT_DIR;
            if (e->d_type == DT_UNKNOWN) {
                auto st = lstat_of(path);
                folder = st && S_ISDIR(st->st_mode);
            }
            record_.made(path, folder);
        }
        ::closedir(d);
    }
}

std::vector<RepositoryFinding> RepositoryWatch::checked() {
    std::vector<RepositoryFinding> out;
    std::set<std::string> candidates;
    std::vector<std::string> new_dirs;
    bool overflow = false;
    if (inotify_.valid()) read_events(candidates, new_dirs, overflow);
    read_mark_events(candidates, new_dirs, overflow);
    // Before this check makes anything itself (a new repository's missing hooks, its editor
    // folders), which is not the command's doing.
    if (record_open_) record_made_folders();
    Found found;
    if (overflow) {
        // Events were lost: search everything again (watches already there stay).
        new_dirs = roots_;
        recheck_.insert(ours_.begin(), ours_.end());
    }
    // Folders listed before list again: what below them is known already stays out.
    std::vector<std::string> changed = changed_unwatched();
    const bool relisting = overflow || !changed.empty();
    std::move(changed.begin(), changed.end(), std::back_inserter(new_dirs));
    // The few folders a command usually makes are not worth starting threads for.
    const bool parallel = overflow || new_dirs.size() > 64;
    walk(std::move(new_dirs), found, parallel, relisting, /*watch=*/true);
    candidates.insert(found.git_dirs.begin(), found.git_dirs.end());
    candidates.insert(found.git_links.begin(), found.git_links.end());
    made_run_entries_.insert(found.run_entries.begin(), found.run_entries.end());
    read_only_now_.clear();
    std::set<std::string> clean;
    std::vector<std::string> fresh;
    for (const auto& dir : found.unreadable) {
        if (is_known(dir)) continue;
        protect_now(dir);
        out.push_back({RepositoryFinding::Kind::folder_protected, dir, "", ""});
    }
    for (const auto& path : candidates)
        if (auto dir = inspect(path, out)) fresh.push_back(*dir);
    take_made_run_entries(fresh, out);
    // A repository protected during the session whose hooks or config changed since: written
    // through a folder or file a command had open before; cleaned again.
    for (const auto& dir : recheck_)
        if (ours_.count(dir)) clean.insert(dir);
    recheck_.clear();
    clean.insert(fresh.begin(), fresh.end());
    std::string failure;
    if (!read_only_now_.empty())
        for (const auto& [owner, protect] : sandboxes_)
            if (failure.empty()) failure = protect(read_only_now_);
    if (!failure.empty()) {
        // Found again the next time anything in them changes.
        for (const auto& path : read_only_now_) known_.erase(path);
        for (const auto& dir : fresh) {
            ours_.erase(dir);
            out.push_back({RepositoryFinding::Kind::not_protected, dir, failure, ""});
        }
    }
    // Cleaned once the sandbox can no longer open them: nothing slips in between.
    for (const auto& dir : clean) neutralise(dir, out);
    return out;
}

std::optional<std::string> RepositoryWatch::inspect(const std::string& path,
                                                    std::vector<RepositoryFinding>& out) {
    using Kind = RepositoryFinding::Kind;
    auto st = lstat_of(path);
    if (!st) return std::nullopt;
    std::string git_dir = path;
    if (name_of(path) == ".git" && !S_ISDIR(st->st_mode)) {
        // A `.git` file or symlink names the git folder; it must not be repointed either.
        const std::string base = parent_of(path);
        if (S_ISREG(st->st_mode)) {
            auto text = read_file(path, 4096);
            if (!text || !text->starts_with("gitdir: ")) return std::nullopt;
            git_dir = named_path(text->substr(8), base);
        }
        if (auto real_base = resolved_path(base); real_base && within_writable(*real_base)) {
            const std::string link = join_path(*real_base, ".git");
            if (!is_known(link)) protect_now(link);
        }
    }
    auto real = resolved_path(git_dir);
    if (!real || !within_writable(*real) || !looks_like_git_dir(*real)) return std::nullopt;
    const std::string& dir = *real;
    bool fresh = false;
    const std::string commondir = dir + "/commondir";
    if (auto text = read_file(commondir, 4096); text && !is_known(commondir)) {
        auto target = resolved_path(named_path(*text, dir));
        // A linked worktree's names its main repository, which is protected. One that names a
        // folder the sandbox may write goes aside before anything is bound to it.
        if (target && within_writable(*target) &&
            !(is_known(*target + "/hooks") && is_known(*target + "/config"))) {
            std::string aside = move_aside(commondir);
            if (!aside.empty())
                out.push_back({Kind::redirect_moved_aside, commondir, *target, aside});
        } else {
            protect_now(commondir);
            fresh = true;
        }
    }
    for (const char* sub : {"/hooks", "/config", "/config.worktree"}) {
        const std::string item = dir + sub;
        if (is_known(item)) continue;
        const bool folder = sub == std::string("/hooks");
        const bool needed = folder || sub == std::string("/config");
        auto item_st = lstat_of(item);
        // Only a real folder or file can be bound; anything else goes aside for an empty one.
        if (item_st && (folder ? !S_ISDIR(item_st->st_mode) : !S_ISREG(item_st->st_mode))) {
            std::string aside = move_aside(item);
            if (aside.empty()) continue;
            out.push_back(
                {folder ? Kind::hook_disabled : Kind::config_moved_aside, item, "", aside});
            item_st.reset();
        }
        if (!item_st && !needed) continue;
        if (!item_st &&
            !create_empty_path(item, folder ? HostFs::Type::directory : HostFs::Type::file))
            continue;
        protect_now(item);
        if (!folder) watch_config(item);
        fresh = true;
    }
    if (!fresh) return std::nullopt;
    ours_.insert(dir);
    if (name_of(dir) == ".git") protect_work_tree(parent_of(dir));
    out.push_back({Kind::protected_repository, dir, "", ""});
    return dir;
}

void RepositoryWatch::protect_work_tree(const std::string& top) {
    // As at the start (host_run_paths.h): what editors run from the top of a work tree is
    // read-only from now on; one made later is take_made_run_entries()'s.
    for (const auto& entry : repository_run_entries()) {
        const std::string path = join_path(top, entry.name);
        if (!is_known(path) && lstat_of(path)) protect_now(path);
    }
}

void RepositoryWatch::take_made_run_entries(const std::vector<std::string>& fresh,
                                            std::vector<RepositoryFinding>& out) {
    using Kind = RepositoryFinding::Kind;
    static const RepositoryRunEntry sourced = {
        "", false, "an allowed .envrc loads it; direnv asks only about the .envrc itself"};
    // What an `.envrc` sources is looked at by name: it has no name of its own to be met by.
    for (const auto& path : sourced_missing_)
        if (lstat_of(path)) made_run_entries_.insert(path);
    for (const auto& path : made_run_entries_) {
        const bool is_sourced = std::find(sourced_missing_.begin(), sourced_missing_.end(), path) !=
                                sourced_missing_.end();
        const auto* entry =
            is_sourced ? &sourced : repository_run_entry(name_of(parent_of(path)), name_of(path));
        if (!entry || trust_.asks_first(*entry, path) || run_known_.count(path) || is_known(path) ||
            !lstat_of(path))
            continue;
        // In a repository made in this check (a clone): what came with it stays, read-only
        // from now on, and the user is told.
        const bool cloned = std::any_of(fresh.begin(), fresh.end(), [&](const std::string& dir) {
            return name_of(dir) == ".git" && path_within(path, parent_of(dir));
        });
        if (cloned) {
            protect_now(path);
            out.push_back({Kind::run_entry_protected, path, entry->reason, ""});
            continue;
        }
        std::string aside = move_aside(path);
        if (aside.empty())
            out.push_back({Kind::not_protected, path, "it cannot be moved aside", ""});
        else
            out.push_back({Kind::run_entry_moved_aside, path, entry->reason, aside});
    }
    made_run_entries_.clear();
}

void RepositoryWatch::watch_config(const std::string& config) {
    if (!inotify_.valid()) return;
    int wd = ::inotify_add_watch(inotify_.get(), config.c_str(),
                                 IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DONT_FOLLOW);
    if (wd >= 0) config_watches_[wd] = config;
}

void RepositoryWatch::neutralise(const std::string& dir, std::vector<RepositoryFinding>& out) {
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

SandboxPolicy with_protected_since(const SandboxPolicy& policy, const RepositoryWatch* watch) {
    SandboxPolicy now = policy;
    if (watch) {
        const auto& since = watch->protected_paths();
        now.protected_paths.insert(now.protected_paths.end(), since.begin(), since.end());
    }
    return now;
}

}  // namespace caretz
