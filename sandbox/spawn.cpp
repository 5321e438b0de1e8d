#include "sandbox/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include "pty/fd_io.h"
#include "sandbox/sandbox.h"

namespace caretz {

void reset_signals_for_exec() {
    for (int sig :
         {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU})
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

    std::vector<int> staged(fds.size());  // allocated here: the child must not allocate
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid != 0) return pid;
    reset_signals_for_exec();
    if (own_process_group) ::setpgid(0, 0);
    // Every source moves above the targets first, so placing one descriptor never overwrites
    // a source still to be placed; dup2 clears close-on-exec on the targets, so exactly these
    // reach the child, and close_range below drops the staged copies.
    for (size_t i = 0; i < fds.size(); ++i)
        staged[i] = ::fcntl(fds[i].first, F_DUPFD_CLOEXEC, 1000);
    for (size_t i = 0; i < fds.size(); ++i) ::dup2(staged[i], fds[i].second);
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

UniqueFd open_own_executable() {
    UniqueFd fd(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) throw SandboxStartError("cannot open Caretz's own executable");
    return fd;
}

UniqueFd sealed_memory_file(const char* name, std::string_view bytes) {
    UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid()) throw std::system_error(errno, std::generic_category(), "memfd_create");
    if (!write_all(fd.get(), bytes) || ::lseek(fd.get(), 0, SEEK_SET) != 0 ||
        ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) !=
            0)
        throw std::system_error(errno, std::generic_category(), std::string("writing ") + name);
    return fd;
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
