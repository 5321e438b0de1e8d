#include "escalation/host_rerun.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "pty/fd_io.h"
#include "pty/pty.h"
#include "pty/unique_fd.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

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

// The rerun's program, environment and folder; the caller adds where its input and output go.
SpawnOptions rerun_options(const RerunCommand& cmd) {
    SpawnOptions options;
    options.env = cmd.env;
    options.cwd = {cmd.cwd};
    return options;
}

}  // namespace

int rerun_on_terminal(const RerunCommand& cmd, Terminal& terminal,
                      const std::function<void(std::string_view)>& on_output) {
    Pty capture = Pty::open(terminal.size().value_or(WindowSize{}));
    // The terminal's own modes come back before the command starts, so a program that saves
    // and restores them (sudo's password prompt) finds the user's, not Caretz's raw mode.
    terminal.restore();
    SpawnOptions options = rerun_options(cmd);
    options.stdin_fd = terminal.input_fd();
    options.stdout_fd = capture.slave();
    options.stderr_fd = capture.slave();
    options.foreground_of = &terminal;
    pid_t pid = spawn_process({cmd.shell, "-c", cmd.command}, options);
    if (pid > 0) terminal.hand_foreground_to(pid);
    capture.close_slave();
    int status = 127;
    if (pid > 0) {
        status = copy_until_exit(pid, capture.master(), [&](std::string_view bytes) {
            terminal.write(bytes);
            on_output(bytes);
        });
    }
    terminal.take_foreground_back();
    return status;
}

int rerun_without_terminal(const RerunCommand& cmd,
                           const std::function<void(std::string_view)>& on_output, int stop_fd) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return 127;
    UniqueFd out_read(out[0]), out_write(out[1]);
    UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    SpawnOptions options = rerun_options(cmd);
    // A new session has no controlling terminal, so /dev/tty cannot be opened either.
    options.new_session = true;
    options.stdin_fd = devnull.get();
    options.stdout_fd = out_write.get();
    options.stderr_fd = out_write.get();
    pid_t pid = spawn_process({cmd.shell, "-c", cmd.command}, options);
    out_write.reset();
    return pid > 0 ? copy_until_exit(pid, out_read.get(), on_output, stop_fd) : 127;
}

}  // namespace caretz
