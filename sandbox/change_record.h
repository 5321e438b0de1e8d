#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace caretz {

// One path a command left changed, by what the command's start and end differ in.
struct Change {
    // `written`: a file the command made under another name and renamed onto this path
    // (git's index, an editor's or `sed -i`'s save); whether one stood here before, no watch
    // tells.
    enum class Kind : uint8_t { created, modified, deleted, renamed, written };
    Kind kind = Kind::created;
    std::string path;  // absolute; a rename's new path
    std::string from;  // a rename's old path
    bool folder = false;
};

const char* to_string(Change::Kind kind);

// What a command changed in the writable roots, as the offer shows it.
struct ChangeList {
    std::vector<Change> kept;  // the shortest paths (at most ChangeRecord::kKept), shortest first
    uint64_t count = 0;        // every path changed, kept or not
    // Why changes may be missing from the list (a watch limit reached, events lost); "" when
    // every change in the writable roots was seen.
    std::string incomplete;
};

// The net change to each path from a stream of file system events (made, written, removed,
// renamed): a file made and removed again is no change, one removed and made again is
// modified, a folder made and then renamed is made under its new name. Bounded: the state of at
// most kTracked paths (a hash and a kind each) and the names of the kKept shortest; past
// kTracked, paths not seen yet are left out and the list says it is incomplete.
class ChangeRecord {
public:
    static constexpr size_t kKept = 256;
    static constexpr size_t kTracked = size_t{1} << 20;

    void made(const std::string& path, bool folder);
    void written(const std::string& path, bool folder);
    void removed(const std::string& path, bool folder);
    void renamed(const std::string& from, const std::string& to, bool folder);
    // Changes may be missing, for `why`; the first reason given is kept.
    void incomplete(const std::string& why);

    // The folders made since the start, in the order they were made: what is in them was
    // made too, and, made before any watch could be on them, is listed by whoever watches.
    const std::vector<std::string>& made_folders() const { return made_folders_; }

    ChangeList list() const;
    // No path not seen yet can be added.
    bool full() const { return state_.size() >= kTracked; }

private:
    using Kind = Change::Kind;
    // Sets what `path` has come to, and for a rename the path it came from (in from_).
    void set(const std::string& path, Kind kind, bool folder, const std::string& from = "");
    void forget(const std::string& path);
    // The state of `path`, nullptr for none.
    const Kind* state(const std::string& path) const;

    std::unordered_map<uint64_t, Kind> state_;
    std::unordered_map<uint64_t, std::string> from_;  // renames' old paths
    // By (length, path): the kKept shortest paths with a state, and their change.
    std::map<std::pair<size_t, std::string>, Change> kept_;
    std::vector<std::string> made_folders_;
    std::string incomplete_;
};

}  // namespace caretz
