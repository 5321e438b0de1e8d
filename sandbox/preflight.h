#pragma once

#include <optional>
#include <string>

namespace caretz {

// Why bubblewrap cannot be run, as a sentence that names the fix, or nullopt when `bwrap` is
// an executable in $PATH.
std::optional<std::string> bubblewrap_problem();

// Why this user cannot have user namespaces, as a sentence that names the fix, or nullopt when
// one was really created. The settings that turn them off (kernel.unprivileged_userns_clone,
// user.max_user_namespaces, Ubuntu's kernel.apparmor_restrict_unprivileged_userns) are read
// first, so the answer names the one to change; then a child process is started in a new user
// namespace, which catches what no setting shows (a container's seccomp filter).
std::optional<std::string> user_namespace_problem();

// Why the sandbox cannot start on this machine (the first of the two problems above), or
// nullopt. Caretz never runs a command unsandboxed instead. Asked once a sandbox failed to
// start, to say why, rather than before each start: the user namespace probe forks.
std::optional<std::string> sandbox_unavailable_reason();

// Absolute path of an executable found in $PATH, or empty.
std::string find_in_path(const std::string& name);

}  // namespace caretz
