#include "sandbox/preflight.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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

// Starts a child in a new user namespace, which exits at once; the errno of the attempt, or 0
// when it worked. A raw clone, unlike unshare(), works in a process with threads.
int try_user_namespace() {
    long pid = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid < 0) return errno;
    if (pid == 0) ::_exit(0);
    int status;
    while (::waitpid(static_cast<pid_t>(pid), &status, 0) < 0 && errno == EINTR) {
    }
    return 0;
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

std::optional<std::string> bubblewrap_problem() {
    if (find_in_path("bwrap").empty())
        return "bubblewrap (bwrap) is not installed; install it with: apt-get install bubblewrap";
    return std::nullopt;
}

std::optional<std::string> user_namespace_problem() {
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
    if (int error = try_user_namespace())
        return std::string("a user namespace cannot be created here (") + std::strerror(error) +
               "); in a container, let it create them (for Docker: --security-opt "
               "seccomp=unconfined, or a seccomp profile that allows clone with CLONE_NEWUSER)";
    return std::nullopt;
}

std::optional<std::string> sandbox_unavailable_reason() {
    if (auto problem = bubblewrap_problem()) return problem;
    return user_namespace_problem();
}

}  // namespace caretz
