#include "sandbox/protection/watch_parts.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "pty/unique_fd.h"
#include "sandbox/path_names.h"

namespace caretz {

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

std::optional<struct stat> lstat_of(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
    return st;
}

std::optional<std::string> read_file(const std::string& path, size_t limit) {
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

// The file a path in a `.git` file or `commondir` names, relative to `base`.
std::string named_path(std::string text, const std::string& base) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text.starts_with("/") ? text : join_path(base, text);
}

// Threads for a search: the machine's cores, four at most.
unsigned search_threads() {
    return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

}  // namespace caretz
