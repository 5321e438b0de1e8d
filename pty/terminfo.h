#pragma once

#include <string>

namespace caretz {

// Whether the terminfo database (as ncurses searches it: $TERMINFO, ~/.terminfo,
// $TERMINFO_DIRS, the system's folders) has an entry for the terminal type `term`.
bool terminfo_knows(const std::string& term);

}  // namespace caretz
