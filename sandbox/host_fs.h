#pragma once

#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "sandbox/path_names.h"

namespace caretz {

// What the sandbox code needs to know about the host's file system. Pure code takes this
// interface so tests can describe a host without touching the real one.
class HostFs {
public:
    enum class Type { missing, directory, file, symlink, socket, other };
    struct Entry {
        std::string name;
        Type type;
    };

    virtual ~HostFs() = default;
    // The type of path itself (symlinks are not followed).
    virtual Type type(const std::string& path) const = 0;
    // Entries of a directory, sorted by name; empty when it cannot be read.
    virtual std::vector<Entry> list(const std::string& dir) const = 0;
    virtual std::string read_link(const std::string& path) const = 0;
    // The path with every symlink resolved, or nullopt when it does not exist.
    virtual std::optional<std::string> real_path(const std::string& path) const = 0;
    // The first `max` bytes of the regular file `path` (not through a symlink); "" when it
    // cannot be read.
    virtual std::string read_start(const std::string& path, size_t max) const = 0;
};

// Creates `path` empty on the host, as a folder or a regular file (`type`), with the default
// permissions (the umask applies), never through a symlink. True when it is there afterwards.
bool create_empty_path(const std::string& path, HostFs::Type type);

// Makes folder `path`, and those above it that are missing, and leaves it to its owner alone
// (0700). Its mode is changed only when it differs: a chmod writes the inode every time, and
// this runs at every start. Returns the error of the first step that failed.
std::error_code make_private_folder(const std::string& path);

// `path` itself when `fs` has it, else the nearest folder above it that it has ("/" at most; a
// relative path climbs no higher than its first name).
inline std::string deepest_existing(const HostFs& fs, std::string path) {
    while (path != "/" && fs.type(path) == HostFs::Type::missing) {
        std::string above = parent_of(path);
        if (above == path) break;
        path = std::move(above);
    }
    return path;
}

// `path` on this machine with every symlink resolved, or nullopt when it does not exist.
std::optional<std::string> resolved_path(const std::string& path);

// The machine's own file system.
class RealHostFs : public HostFs {
public:
    Type type(const std::string& path) const override;
    std::vector<Entry> list(const std::string& dir) const override;
    std::string read_link(const std::string& path) const override;
    std::optional<std::string> real_path(const std::string& path) const override;
    std::string read_start(const std::string& path, size_t max) const override;
};

}  // namespace caretz
