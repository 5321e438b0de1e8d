#include "sandbox/protection/search_record.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>

#include "pty/fd_io.h"
#include "pty/unique_fd.h"
#include "sandbox/path_names.h"
#include "sandbox/policy.h"

namespace caretz {

static_assert(sizeof(dev_t) == 8 && sizeof(ino_t) == 8, "the format's u64 fields");

namespace {

// The format, in this machine's byte order (a record never leaves it):
//   "caretz search record 4\n", u32 bytes, the key
//   u64 folders, each: u32 bytes shared with the path before, u32 bytes that follow, u64 dev,
//       u64 inode, i64 ctime seconds, i64 ctime nanoseconds, u8 racy, the bytes that follow
//   the git folders, then the `.git` files and links, then the unreadable folders, then the
//       entries editors and tools run from, each list as u64 paths, each path u32 bytes and
//       the path
// and nothing after. Format 4: the entries editors and tools run from in folders without
// subfolders too, which format 3's search looked into only for `.git` and `HEAD`.
constexpr std::string_view kMagic = "caretz search record 4\n";
constexpr const char* kPrefix = "search-";
constexpr size_t kMaxBytes = size_t{1} << 30;
constexpr time_t kUnusedFor = 30 * 24 * 3600;  // a record not used that long is removed
constexpr time_t kLeftFor = 3600;              // a piece of one a writer that died left, this long
constexpr time_t kTouchAfter = 24 * 3600;      // a record in use has its time set again daily

std::string key_of(const std::vector<std::string>& roots, const std::vector<std::string>& hidden) {
    std::string key;
    for (const auto* list : {&roots, &hidden}) {
        std::vector<std::string> sorted = *list;
        std::sort(sorted.begin(), sorted.end());
        for (const auto& path : sorted) key += path + '\0';
        key += '\0';
    }
    return key;
}

// FNV-1a: a file name for the key, which is checked in full when the record is read.
uint64_t fnv1a(std::string_view text) {
    uint64_t hash = 0xcbf29ce484222325ull;
    for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
    return hash;
}

class Reader {
public:
    explicit Reader(std::string_view bytes) : bytes_(bytes) {}
    bool literal(std::string_view s) {
        if (!bytes_.starts_with(s)) return false;
        bytes_.remove_prefix(s.size());
        return true;
    }
    template <typename T>
    bool number(T& out) {
        if (bytes_.size() < sizeof out) return false;
        std::memcpy(&out, bytes_.data(), sizeof out);
        bytes_.remove_prefix(sizeof out);
        return true;
    }
    bool bytes(size_t count, std::string_view& out) {
        if (bytes_.size() < count) return false;
        out = bytes_.substr(0, count);
        bytes_.remove_prefix(count);
        return true;
    }
    // A u32 length and that many bytes.
    bool text(std::string_view& out) {
        uint32_t count;
        return number(count) && bytes(count, out);
    }
    bool done() const { return bytes_.empty(); }

private:
    std::string_view bytes_;
};

class Writer {
public:
    explicit Writer(size_t expected) { bytes_.reserve(expected); }
    template <typename T>
    void number(T n) {
        bytes_.append(reinterpret_cast<const char*>(&n), sizeof n);
    }
    void text(std::string_view s) {
        number(static_cast<uint32_t>(s.size()));
        bytes_.append(s);
    }
    void bytes(std::string_view s) { bytes_.append(s); }
    const std::string& result() const { return bytes_; }

private:
    std::string bytes_;
};

bool within_any(const std::string& path, const std::vector<std::string>& roots) {
    return std::any_of(roots.begin(), roots.end(),
                       [&](const std::string& root) { return path_within(path, root); });
}

// A read-only map of a file of this user's that only this user may write.
class OwnFile {
public:
    explicit OwnFile(const std::string& path) {
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        struct stat st;
        if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
            st.st_size <= 0 || static_cast<size_t>(st.st_size) > kMaxBytes)
            return;
        // All of it read in at once: one call instead of a page fault for each page.
        void* at = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                          MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
        if (at == MAP_FAILED) return;
        bytes_ = {static_cast<const char*>(at), static_cast<size_t>(st.st_size)};
        timespec now;
        ::clock_gettime(CLOCK_REALTIME, &now);
        if (now.tv_sec - st.st_mtim.tv_sec > kTouchAfter) ::futimens(fd.get(), nullptr);
    }
    ~OwnFile() {
        if (!bytes_.empty()) ::munmap(const_cast<char*>(bytes_.data()), bytes_.size());
    }
    OwnFile(const OwnFile&) = delete;
    OwnFile& operator=(const OwnFile&) = delete;
    // Empty when there is no such file.
    std::string_view bytes() const { return bytes_; }

private:
    std::string_view bytes_;
};

// Removes the records in `dir` not used for a while, and what writers that died left.
void remove_unused(const std::string& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    timespec now;
    ::clock_gettime(CLOCK_REALTIME, &now);
    while (dirent* e = ::readdir(d)) {
        if (std::strncmp(e->d_name, kPrefix, std::strlen(kPrefix)) != 0) continue;
        const std::string_view name = e->d_name;
        const time_t limit = name.ends_with(".tmp") ? kLeftFor : kUnusedFor;
        struct stat st;
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode) && now.tv_sec - st.st_mtim.tv_sec > limit)
            ::unlinkat(::dirfd(d), e->d_name, 0);
    }
    ::closedir(d);
}

}  // namespace

SearchRecordFile search_record_file(const std::string& state_dir,
                                    const std::vector<std::string>& roots,
                                    const std::vector<std::string>& hidden) {
    SearchRecordFile file;
    file.key = key_of(roots, hidden);
    char name[32];
    std::snprintf(name, sizeof name, "%s%016llx", kPrefix,
                  static_cast<unsigned long long>(fnv1a(file.key)));
    file.path = state_dir + "/" + name;
    return file;
}

std::optional<SearchRecord> read_search_record(const SearchRecordFile& file,
                                               const std::vector<std::string>& roots) {
    OwnFile contents(file.path);
    const size_t file_size = contents.bytes().size();
    Reader in(contents.bytes());
    std::string_view key;
    uint64_t count = 0;
    if (!in.literal(kMagic) || !in.text(key) || key != file.key || !in.number(count) ||
        count > file_size)
        return std::nullopt;
    SearchRecord record;
    record.folders.reserve(count);
    std::string previous;
    for (uint64_t i = 0; i < count; ++i) {
        uint32_t shared, size;
        FolderSeen seen{};
        int64_t sec, nsec;
        uint8_t racy;
        std::string_view rest;
        if (!in.number(shared) || !in.number(size) || !in.number(seen.dev) ||
            !in.number(seen.ino) || !in.number(sec) || !in.number(nsec) || !in.number(racy) ||
            !in.bytes(size, rest) || shared > previous.size() || racy > 1)
            return std::nullopt;
        seen.ctime = {static_cast<time_t>(sec), static_cast<long>(nsec)};
        seen.racy = racy == 1;
        previous.resize(shared);
        previous.append(rest);
        if (!within_any(previous, roots)) return std::nullopt;
        record.folders.emplace_back(previous, seen);
    }
    for (auto* list :
         {&record.git_dirs, &record.git_links, &record.unreadable, &record.run_entries}) {
        if (!in.number(count) || count > file_size) return std::nullopt;
        for (uint64_t i = 0; i < count; ++i) {
            std::string_view path;
            if (!in.text(path)) return std::nullopt;
            list->emplace_back(path);
            if (!within_any(list->back(), roots)) return std::nullopt;
        }
    }
    if (!in.done()) return std::nullopt;
    // Each finding is of a folder recorded, which a later start can look at.
    std::set<std::string> unseen(record.git_dirs.begin(), record.git_dirs.end());
    unseen.insert(record.unreadable.begin(), record.unreadable.end());
    for (const auto* list : {&record.git_links, &record.run_entries})
        for (const auto& path : *list) unseen.insert(parent_of(path));
    for (auto it = record.folders.begin(); it != record.folders.end() && !unseen.empty(); ++it)
        unseen.erase(it->first);
    if (!unseen.empty()) return std::nullopt;
    return record;
}

bool write_search_record(const SearchRecordFile& file, const FoldersSeen& folders,
                         const SearchFindings& found, const std::vector<dev_t>& relisted) {
    Writer out(folders.size() * 48);
    out.bytes(kMagic);
    out.text(file.key);
    out.number(static_cast<uint64_t>(folders.size()));
    std::string_view previous;
    for (const auto& [path, seen] : folders) {
        size_t shared = 0;
        while (shared < previous.size() && shared < path.size() && previous[shared] == path[shared])
            ++shared;
        out.number(static_cast<uint32_t>(shared));
        out.number(static_cast<uint32_t>(path.size() - shared));
        out.number(seen.dev);
        out.number(seen.ino);
        out.number(static_cast<int64_t>(seen.ctime.tv_sec));
        out.number(static_cast<int64_t>(seen.ctime.tv_nsec));
        const bool racy =
            seen.racy || std::find(relisted.begin(), relisted.end(), seen.dev) != relisted.end();
        out.number(static_cast<uint8_t>(racy ? 1 : 0));
        out.bytes(std::string_view(path).substr(shared));
        previous = path;
    }
    for (const auto* list :
         {&found.git_dirs, &found.git_links, &found.unreadable, &found.run_entries}) {
        out.number(static_cast<uint64_t>(list->size()));
        for (const auto& path : *list) out.text(path);
    }

    remove_unused(parent_of(file.path));
    // A record lost in a crash costs one whole search: not worth an fsync of megabytes.
    return replace_file(file.path, out.result(), /*durable=*/false);
}

}  // namespace caretz
