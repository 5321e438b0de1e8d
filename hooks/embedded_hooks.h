#pragma once

#include <string_view>

namespace caretz {

// The text of one of the files in hooks/ ("bash", "zsh", "zshenv", "fish"), compiled into the
// binary; empty for any other name.
std::string_view embedded_hook_file(std::string_view name);

}  // namespace caretz
