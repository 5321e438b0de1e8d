#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "sandbox/path_names.h"
#include "sandbox/protection/git_config_filter.h"
#include "sandbox/protection/repository_watch.h"
#include "sandbox/protection/watch_parts.h"

// The start-up search of the writable roots and its record (search_record.h), the search of
// the folders a check finds new or changed, and the configs it follows (RepositoryWatch).

namespace caretz {

namespace {

// Whether the kernel itself sets a folder's change time on the file system whenever a name in
// it comes or goes, so that a search record (search_record.h) may rely on it across starts.
bool keeps_change_times(unsigned long fs_type) {
    return kernel_kept(fs_type) || fs_type == BTRFS_SUPER_MAGIC;
}

}  // namespace

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

// The folders still to search, shared by the threads of one walk(). Each thread takes from its
// own stack first and hands half of it over when another thread has nothing to do. The walk
// starts on one thread; the others start once it is clearly not a small tree (a backlog of
// folders, or many folders searched), since a small one is searched sooner than a thread
// starts and joins.
struct RepositoryWatch::FolderQueue {
    struct Item {
        std::shared_ptr<UniqueFd> parent;  // the folder it was listed in (null for a top)
        std::string path;
        size_t name_at = 0;  // where its name starts in path
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
    bool watch = false;   // each folder gets its watch before it is listed
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
    while (!own.empty() || queue.take(own)) {
        FolderQueue::Item item = std::move(own.back());
        own.pop_back();
        const std::string& dir = item.path;
        // The watch, then the change time, then what is in it: what is made after the watch is
        // an event, what was there before is listed.
        const bool unwatched = !queue.watch || !add_watch(dir, found);
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
        if (unwatched) note_unwatched(dir, self, found);
        bool head = false, objects = false, commondir = false;
        const std::string_view folder_name = std::string_view(dir).substr(dir.rfind('/') + 1);
        // Every folder is listed, one without subfolders too: any folder may hold a file of the
        // table (an `.envrc`, a `mise.toml`), and a listing costs less than a lookup of each
        // name (bench/NOTES.md). getdents64 itself: readdir() would cost three more system
        // calls per folder.
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
            // Git never looks for a repository among the object files: no need to search
            // the 256 folders there.
            if (git_dir && std::strcmp(child.path.c_str() + child.name_at, "objects") == 0)
                continue;
            own.push_back(std::move(child));
        }
        children.clear();
        queue.call_helpers_if_needed(own.size());
        queue.share(own);
    }
}

}  // namespace caretz
