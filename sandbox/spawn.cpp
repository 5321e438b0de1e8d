#include "sandbox/spawn.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace caretz {

void reset_signals_for_exec() {
    for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGWINCH, SIGTSTP,
                    SIGTTIN, SIGTTOU})
        ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

pid_t spawn_process(std::vector<std::string> argv, const Environment& env,
                    const std::vector<std::pair<int, int>>& fds, bool own_process_group) {
    std::vector<std::string> envs = environment_strings(env);
    std::vector<char*> c_argv, c_env;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    for (auto& e : envs) c_env.push_back(e.data());
    c_env.push_back(nullptr);

    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid != 0) return pid;
    reset_signals_for_exec();
    if (own_process_group) ::setpgid(0, 0);
    // dup2 clears close-on-exec on the new descriptor, so exactly these reach the child.
    for (const auto& [from, to] : fds) {
        if (from == to) {
            ::dup2(from, 1000 + to);
            ::dup2(1000 + to, to);
            ::close(1000 + to);
        } else {
            ::dup2(from, to);
        }
    }
    int highest = 2;
    for (const auto& fd : fds) highest = std::max(highest, fd.second);
    ::close_range(static_cast<unsigned>(highest) + 1, ~0U, 0);
    // The child (bwrap, or a host rerun) must not outlive Caretz.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::execve(c_argv[0], c_argv.data(), c_env.data());
    ::_exit(127);
}

int exit_status_of(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return 1;
}

int wait_for_exit(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return 1;
    }
    return exit_status_of(status);
}

std::string random_hex(size_t bytes) {
    std::string raw(bytes, '\0');
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error("getrandom failed");
        got += static_cast<size_t>(n);
    }
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (unsigned char c : raw) {
        hex += digits[c >> 4];
        hex += digits[c & 15];
    }
    return hex;
}

}  // namespace caretz
