#include "sandbox/preflight.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace caretz {

namespace {

std::optional<long> read_number(const char* path) {
    std::ifstream in(path);
    long value;
    if (in >> value) return value;
    return std::nullopt;
}

}  // namespace

std::string find_in_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) continue;
        std::string candidate = dir + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

std::optional<std::string> sandbox_unavailable_reason() {
    if (find_in_path("bwrap").empty())
        return "bubblewrap (bwrap) is not installed; install it with: apt-get install bubblewrap";
    if (read_number("/proc/sys/kernel/unprivileged_userns_clone") == 0L && ::geteuid() != 0)
        return "unprivileged user namespaces are disabled; enable them with: "
               "sysctl -w kernel.unprivileged_userns_clone=1";
    if (read_number("/proc/sys/user/max_user_namespaces") == 0L)
        return "user namespaces are disabled (user.max_user_namespaces is 0); enable them with: "
               "sysctl -w user.max_user_namespaces=15000";
    if (read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1L &&
        ::geteuid() != 0)
        return "AppArmor stops unprivileged user namespaces; allow them with: "
               "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
    return std::nullopt;
}

}  // namespace caretz
