#include "escalation/host_rerun.h"

#include <fcntl.h>
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
// background process that keeps the pipe open does not keep Caretz waiting. Once `stop_fd`
// (-1: none) turns readable, the child's process group gets SIGTERM; nothing is read from it,
// so whoever else watches it sees the stop too.
int copy_until_exit(pid_t pid, int fd, const std::function<void(std::string_view)>& on_output,
                    int stop_fd = -1) {
    std::optional<int> status;
    bool stopped = false;
    char buf[65536];
    while (true) {
        pollfd p[2] = {{fd, POLLIN, 0}, {stopped ? -1 : stop_fd, POLLIN, 0}};
        ::poll(p, 2, status ? 0 : 100);
        if (p[1].revents & (POLLIN | POLLHUP)) {
            ::kill(-pid, SIGTERM);
            stopped = true;
        }
        if (p[0].revents) {
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

int rerun_without_terminal(const RerunCommand& cmd,
                           const std::function<void(std::string_view)>& on_output, int stop_fd) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return 127;
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ExecArgs args(cmd);

    pid_t pid = ::fork();
    if (pid == 0) {
        reset_signals_for_exec();
        // A new session has no controlling terminal, so /dev/tty cannot be opened either.
        ::setsid();
        ::dup2(devnull, STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(out[1], STDERR_FILENO);
        ::close_range(3, ~0U, 0);
        if (::chdir(cmd.cwd.c_str()) != 0) ::_exit(126);
        ::execve(args.argv[0], args.argv.data(), args.envp.data());
        ::_exit(127);
    }
    ::close(out[1]);
    if (devnull >= 0) ::close(devnull);
    int status = pid > 0 ? copy_until_exit(pid, out[0], on_output, stop_fd) : 127;
    ::close(out[0]);
    return status;
}

}  // namespace caretz
