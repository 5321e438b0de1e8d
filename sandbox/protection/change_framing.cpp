#include <dirent.h>
#include <sys/stat.h>

#include "sandbox/path_names.h"
#include "sandbox/protection/inotify_reader.h"
#include "sandbox/protection/repository_watch.h"
#include "sandbox/protection/watch_parts.h"

// The framing of the change record (change_record.h) around each command: what the watches
// saw from begin_changes() to end_changes() (RepositoryWatch).

namespace caretz {

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

}  // namespace caretz
