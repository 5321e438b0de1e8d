#pragma once

// What the pieces of RepositoryWatch (repository_watch.cpp, repository_search.cpp,
// folder_watches.cpp, change_framing.cpp) and the findings (repository_findings.cpp) share:
// looks at the file system that none of them owns.

#include <sys/stat.h>

#include <optional>
#include <string>

namespace caretz {

// Whether the kernel keeps the file system's folders itself (ext4, xfs and tmpfs): a folder's
// link count then counts its subfolders, and a file handle from name_to_handle_at is the one a
// fanotify event reports. A FUSE or network file system reports what its server says, btrfs
// and overlayfs one link for every folder.
bool kernel_kept(unsigned long fs_type);

// The path's own status (a symlink's, not its target's); nothing when it is missing.
std::optional<struct stat> lstat_of(const std::string& path);

// The whole regular file, not through a symlink; nothing when it cannot be read or is longer
// than `limit`.
std::optional<std::string> read_file(const std::string& path, size_t limit = 1 << 20);

// The file a path in a `.git` file or `commondir` names, relative to `base`.
std::string named_path(std::string text, const std::string& base);

// Threads for a search: the machine's cores, four at most.
unsigned search_threads();

}  // namespace caretz
