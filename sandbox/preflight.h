#pragma once

#include <optional>
#include <string>

namespace caretz {

// Why the sandbox cannot start on this machine, as a sentence that names the fix, or nullopt
// when bubblewrap is installed and user namespaces are allowed. Caretz never runs a command
// unsandboxed instead.
std::optional<std::string> sandbox_unavailable_reason();

// Absolute path of an executable found in $PATH, or empty.
std::string find_in_path(const std::string& name);

}  // namespace caretz
