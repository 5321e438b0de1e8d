#include "sandbox/change_record.h"

#include <functional>
#include <iterator>

namespace caretz {

namespace {

uint64_t key_of(const std::string& path) {
    return std::hash<std::string>{}(path);
}

}  // namespace

const char* to_string(Change::Kind kind) {
    switch (kind) {
        case Change::Kind::created:
            return "created";
        case Change::Kind::modified:
            return "modified";
        case Change::Kind::deleted:
            return "deleted";
        case Change::Kind::renamed:
            return "renamed";
        case Change::Kind::written:
            return "written";
    }
    return "modified";
}

const ChangeRecord::Kind* ChangeRecord::state(const std::string& path) const {
    auto it = state_.find(key_of(path));
    return it == state_.end() ? nullptr : &it->second;
}

void ChangeRecord::set(const std::string& path, Kind kind, bool folder, const std::string& from) {
    const uint64_t key = key_of(path);
    auto it = state_.find(key);
    if (it == state_.end()) {
        if (state_.size() >= kTracked) {
            incomplete("more than " + std::to_string(kTracked) +
                       " paths changed, more than Caretz keeps count of");
            return;
        }
        it = state_.emplace(key, kind).first;
    }
    it->second = kind;
    if (kind == Kind::renamed)
        from_[key] = from;
    else
        from_.erase(key);

    const auto at = std::make_pair(path.size(), path);
    if (kept_.size() >= kKept && !kept_.count(at)) {
        if (!(at < std::prev(kept_.end())->first)) return;
        kept_.erase(std::prev(kept_.end()));
    }
    kept_[at] = Change{kind, path, kind == Kind::renamed ? from : "", folder};
}

void ChangeRecord::forget(const std::string& path) {
    const uint64_t key = key_of(path);
    state_.erase(key);
    from_.erase(key);
    kept_.erase(std::make_pair(path.size(), path));
}

void ChangeRecord::made(const std::string& path, bool folder) {
    const Kind* now = state(path);
    if (!now) {
        set(path, Kind::created, folder);
        if (folder) made_folders_.push_back(path);
    } else if (*now == Kind::deleted) {
        set(path, Kind::modified, folder);  // replaced
        // A new folder all the same, filled before any watch was on it.
        if (folder) made_folders_.push_back(path);
    }
}

void ChangeRecord::written(const std::string& path, bool folder) {
    if (!state(path)) set(path, Kind::modified, folder);
}

void ChangeRecord::removed(const std::string& path, bool folder) {
    const Kind* now = state(path);
    if (!now || *now == Kind::modified || *now == Kind::written) {
        set(path, Kind::deleted, folder);
    } else if (*now == Kind::created) {
        forget(path);
    } else if (*now == Kind::renamed) {
        // What was removed is the file that stood at the old path at the start; if another
        // took its place there meanwhile (an editor's save), that one is a modification.
        const std::string origin = from_[key_of(path)];
        forget(path);
        const Kind* there = state(origin);
        if (!there)
            set(origin, Kind::deleted, folder);
        else if (*there == Kind::created || *there == Kind::written)
            set(origin, Kind::modified, folder);
    }
}

void ChangeRecord::renamed(const std::string& from, const std::string& to, bool folder) {
    const Kind* now = state(from);
    if (now && *now == Kind::created) {
        forget(from);
        const Kind* there = state(to);
        if (folder || (there && *there == Kind::deleted))
            made(to, folder);
        else if (!there)
            set(to, Kind::written, folder);  // new, or put in place of a file
        else if (*there != Kind::created)
            set(to, Kind::modified, folder);
    } else if (now && *now == Kind::renamed) {
        const std::string origin = from_[key_of(from)];
        forget(from);
        if (origin == to)
            forget(to);  // back where it was
        else
            set(to, Kind::renamed, folder, origin);
    } else {
        if (now) forget(from);
        set(to, Kind::renamed, folder, from);
    }
}

void ChangeRecord::incomplete(const std::string& why) {
    if (incomplete_.empty()) incomplete_ = why;
}

ChangeList ChangeRecord::list() const {
    ChangeList out;
    out.kept.reserve(kept_.size());
    for (const auto& [at, change] : kept_) out.kept.push_back(change);
    out.count = state_.size();
    out.incomplete = incomplete_;
    return out;
}

}  // namespace caretz
