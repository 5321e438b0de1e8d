#pragma once

#include <string_view>

namespace caretz {

// The text of one of the files in hooks/ ("bash", "zsh", "zshenv", "fish"), compiled into the
// binary; empty for any other name.
std::string_view embedded_hook_file(std::string_view name);

// The shell guard library built from hooks/shell_guard.c (see there), compiled into the binary.
std::string_view embedded_shell_guard();

}  // namespace caretz
