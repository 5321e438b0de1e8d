#include "app/user_context.h"

#include <limits.h>
#include <pwd.h>
#include <unistd.h>

namespace caretz {

UserContext current_user_context() {
    UserContext ctx;
    ctx.env = current_environment();
    if (auto it = ctx.env.find("HOME"); it != ctx.env.end() && !it->second.empty()) {
        ctx.home = it->second;
    } else if (passwd* pw = ::getpwuid(::getuid())) {
        ctx.home = pw->pw_dir;
    }
    char buf[PATH_MAX];
    ctx.cwd = ::getcwd(buf, sizeof buf) ? buf : "/";
    auto shell = ctx.env.find("SHELL");
    ctx.shell = (shell != ctx.env.end() && !shell->second.empty() && shell->second[0] == '/')
                    ? shell->second
                    : "/bin/sh";
    return ctx;
}

}  // namespace caretz
