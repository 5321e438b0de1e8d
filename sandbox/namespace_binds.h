#pragma once

#include <string>
#include <vector>

#include "pty/unique_fd.h"

namespace caretz {

// Mounts inside a running sandbox, from the host. bwrap made the sandbox's user namespace as
// the user, so the user may enter it and, within it, change the sandbox's mount namespace
// (`mount_ns_fd`, from /proc/PID/ns/mnt of a process inside) without any privilege of the
// host. A child process enters both (Caretz itself has threads, which may not). Paths are
// absolute, as the sandbox sees them, and are never resolved through a symlink. Each returns
// "" on success, else what failed.

// Binds each of `read_only` onto itself read-only.
std::string bind_in_sandbox(int mount_ns_fd, const std::vector<std::string>& read_only);

// Moves each of `mounts`, made elsewhere and not attached anywhere (fsmount), over the folder
// that the same place in `targets` names.
std::string attach_in_sandbox(int mount_ns_fd, const std::vector<std::string>& targets,
                              const std::vector<UniqueFd>& mounts);

}  // namespace caretz
