#pragma once

#include <string>
#include <vector>

#include "sandbox/protection/hidden_defaults.h"

namespace caretz {

// A refusal a tool hides by doing without: several tools do not fail with "No such file or
// directory" when the sandbox hides their credential store, but go on without it and fail
// later in a way of their own (kubectl talks to localhost:8080, gh asks to log in, git for a
// username). One row: the program, a text its fallback line holds, and the stores it went
// without. Rows are only evidence together with a record that the program ran.
struct CredentialFallback {
    const char* program;  // its name on $PATH, as the run watch records it
    const char* line;     // text the fallback line holds, matched as is
    std::vector<HostLocation> stores;
};

// The table, one place for every tool (escalation/credential_fallbacks.cpp).
const std::vector<CredentialFallback>& credential_fallbacks();

// The programs whose runs sandboxes record: sudo, and each program of the table.
std::vector<std::string> programs_to_watch();

}  // namespace caretz
