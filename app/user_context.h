#pragma once

#include <string>

#include "sandbox/environment.h"

namespace caretz {

// Who runs Caretz and where: read once at start.
struct UserContext {
    std::string home;
    std::string cwd;
    std::string shell;  // $SHELL, or /bin/sh
    Environment env;
};

UserContext current_user_context();

}  // namespace caretz
