#include "pty/terminfo.h"

// <term.h> defines a macro for every capability name; it stays inside this file.
#include <curses.h>
#include <term.h>

namespace caretz {

bool terminfo_knows(const std::string& term) {
    if (term.empty()) return false;
    int error = 0;
    TERMINAL* previous = cur_term;
    bool known = ::setupterm(term.c_str(), -1, &error) == OK;
    if (known) ::del_curterm(::set_curterm(previous));
    return known;
}

}  // namespace caretz
