#include "escalation/host_rerun.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "pty/pty.h"
#include "pty/fd_io.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

struct ExecArgs {
    std::vector<std::string> argv_storage;
    std::vector<std::string> env_storage;
    std::vector<char*> argv;
    std::vector<char*> envp;

    explicit ExecArgs(const RerunCommand& cmd)
        : argv_storage{cmd.shell, "-c", cmd.command}, env_storage(environment_strings(cmd.env)) {
        for (auto& a : argv_storage) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto& e : env_storage) envp.push_back(e.data());
        envp.push_back(nullptr);
    }
};

// Hands the terminal's foreground to `pgrp`; SIGTTOU is held off, as a background process
// changing the foreground group would otherwise be stopped by it.
void give_terminal(int tty_fd, pid_t pgrp) {
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTTOU);
    ::sigprocmask(SIG_BLOCK, &block, &old);
    ::tcsetpgrp(tty_fd, pgrp);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

// Copies `fd` to `on_output` until the child has exited and nothing more is ready; a
// background process that keeps the pipe open does not keep Caretz waiting.
int copy_until_exit(pid_t pid, int fd, const std::function<void(std::string_view)>& on_output) {
    std::optional<int> status;
    char buf[65536];
    while (true) {
        pollfd p{fd, POLLIN, 0};
        int ready = ::poll(&p, 1, status ? 0 : 100);
        if (ready > 0) {
            ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0) {
                on_output(std::string_view(buf, static_cast<size_t>(n)));
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (status) return *status;
        } else if (status) {
            return *status;
        }
        int ws;
        if (!status && ::waitpid(pid, &ws, WNOHANG) == pid) status = exit_status_of(ws);
    }
}

}  // namespace

int rerun_on_terminal(const RerunCommand& cmd, int tty_fd, TerminalModes& modes,
                      const std::function<void(std::string_view)>& on_output) {
    Pty capture = Pty::open(terminal_size(tty_fd).value_or(WindowSize{}));
    ExecArgs args(cmd);
    modes.restore();

    pid_t pid = ::fork();
    if (pid == 0) {
        reset_signals_for_exec();
        ::setpgid(0, 0);
        give_terminal(tty_fd, ::getpid());
        ::dup2(tty_fd, STDIN_FILENO);
        ::dup2(capture.slave(), STDOUT_FILENO);
        ::dup2(capture.slave(), STDERR_FILENO);
        ::close_range(3, ~0U, 0);
        if (::chdir(cmd.cwd.c_str()) != 0) ::_exit(126);
        ::execve(args.argv[0], args.argv.data(), args.envp.data());
        ::_exit(127);
    }
    if (pid > 0) ::setpgid(pid, pid);
    capture.close_slave();
    int status = 127;
    if (pid > 0) {
        status = copy_until_exit(pid, capture.master(), [&](std::string_view bytes) {
            write_all(STDOUT_FILENO, bytes);
            on_output(bytes);
        });
    }
    give_terminal(tty_fd, ::getpgrp());
    modes.enter_raw();
    return status;
}

}  // namespace caretz
