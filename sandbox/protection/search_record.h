#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace caretz {

// A folder as a search saw it, taken before the search looked inside: while its file system,
// inode and change time (ctime, which no command can set back) stay the same, so do the names
// in it, and a later search need not list it again.
struct FolderSeen {
    dev_t dev;
    ino_t ino;
    timespec ctime;
    bool racy;  // too recent to tell a later change by: listed again whatever its time says
    // The same folder, with the same change time.
    bool same(const struct stat& st) const {
        return st.st_dev == dev && st.st_ino == ino && st.st_ctim.tv_sec == ctime.tv_sec &&
               st.st_ctim.tv_nsec == ctime.tv_nsec;
    }
};
using FoldersSeen = std::vector<std::pair<std::string, FolderSeen>>;

// What a search of the writable roots found in the folders it saw.
struct SearchFindings {
    std::vector<std::string> git_dirs;
    std::vector<std::string> git_links;
    std::vector<std::string> unreadable;
    std::vector<std::string> run_entries;  // host_run_paths.h: repository_run_entry()
};

// What a search of the writable roots found, kept in Caretz's state folder (hidden from every
// sandbox) for the next start in the same roots: each folder as it was seen, and the git
// folders, `.git` files, unreadable folders and the entries editors and tools run from among
// them. The next start looks at each folder's change time instead of listing it and lists again
// only those that changed, so a start in a large workspace costs one lookup per folder instead
// of three.
struct SearchRecord : SearchFindings {
    FoldersSeen folders;
};

// The record's file in `state_dir` for a search of `roots` that leaves out `hidden`: the key
// (both lists) names it, and the file holds the key too, so that a record is only ever read
// for the search it was made by.
struct SearchRecordFile {
    std::string path;
    std::string key;
};
SearchRecordFile search_record_file(const std::string& state_dir,
                                    const std::vector<std::string>& roots,
                                    const std::vector<std::string>& hidden);

// The record, or nothing when there is none, or it is not a regular file of this user that only
// this user may write, or it is cut short, malformed, for another key, or names a path outside
// `roots`. A record that is not read costs a whole search, never a folder left out.
std::optional<SearchRecord> read_search_record(const SearchRecordFile& file,
                                               const std::vector<std::string>& roots);

// Writes a record of `folders` and what was found in them beside its file and renames it over
// it, so a reader never sees half of one; folders on the devices in `relisted` are recorded as
// racy, so that every start lists them again (file systems whose change times are not the
// kernel's own). Records not used for 30 days are removed from the folder meanwhile. False when
// it could not be written (the start goes on without).
bool write_search_record(const SearchRecordFile& file, const FoldersSeen& folders,
                         const SearchFindings& found, const std::vector<dev_t>& relisted = {});

}  // namespace caretz
