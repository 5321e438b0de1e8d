#pragma once

#include <string>
#include <vector>

namespace caretz {

// Mounts inside a running sandbox, from the host. bwrap made the sandbox's user namespace as
// the user, so the user may enter it and, within it, change the sandbox's mount namespace
// (`mount_ns_fd`, from /proc/PID/ns/mnt of a process inside) without any privilege of the
// host. A child process enters both (Caretz itself has threads, which may not) and there
// binds each of `read_only` onto itself read-only. Paths are absolute, as the sandbox sees
// them, and are never resolved through a symlink. Returns "" on success, else what failed.
std::string bind_in_sandbox(int mount_ns_fd, const std::vector<std::string>& read_only);

}  // namespace caretz
