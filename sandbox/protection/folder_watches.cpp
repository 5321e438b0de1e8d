#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <thread>
#include <unordered_map>

#include "pty/fd_io.h"
#include "sandbox/path_names.h"
#include "sandbox/protection/inotify_reader.h"
#include "sandbox/protection/repository_watch.h"
#include "sandbox/protection/watch_parts.h"

// The kernel's watches on the writable folders (inotify, fanotify past its limit, change times
// past both) and reading their events (RepositoryWatch).

namespace caretz {

namespace {

// The same as an inotify watch's events, for a fanotify mark, folders included.
constexpr uint64_t kMarkEvents = FAN_CREATE | FAN_MOVED_TO | FAN_ONDIR;

// Whether inotify_add_watch failed because the user's watches are used up.
bool past_watch_limit(int err) {
    return err == ENOSPC || err == ENOMEM;
}

// A folder's fanotify mark, as its events name it: its file system and its file handle.
std::string mark_key(const __kernel_fsid_t& fsid, const file_handle& handle) {
    std::string key(reinterpret_cast<const char*>(&fsid), sizeof fsid);
    key.append(reinterpret_cast<const char*>(&handle.handle_type), sizeof handle.handle_type);
    key.append(reinterpret_cast<const char*>(handle.f_handle), handle.handle_bytes);
    return key;
}

// Runs work(0) .. work(n - 1), each on a thread of its own but the first, and waits for all.
void on_threads(unsigned n, const std::function<void(unsigned)>& work) {
    std::vector<std::thread> helpers;
    for (unsigned i = 1; i < n; ++i) helpers.emplace_back(work, i);
    work(0);
    for (auto& t : helpers) t.join();
}

}  // namespace

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

void RepositoryWatch::read_events(std::set<std::string>& candidates,
                                  std::vector<std::string>& new_dirs, bool& overflow) {
    if (reader_) {
        InotifyReader::Taken taken = reader_->take();
        if (taken.lost) {
            overflow = true;
            if (record_open_)
                record_.incomplete("more events came than Caretz holds in memory (" +
                                   std::to_string(InotifyReader::kMaxHeld >> 20) + " MiB)");
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

}  // namespace caretz
