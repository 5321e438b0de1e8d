#include "sandbox/fresh_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pty/unique_fd.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/host_fs.h"
#include "sandbox/preflight.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

constexpr int kStatusFd = 3;

// Reads until EOF on both the output pipe and bwrap's status pipe. bwrap reports
// "child-pid" on the status pipe only once the sandbox is set up; output that arrives before
// that is held back, and becomes the error message if the report never comes.
bool pump_until_closed(int output_fd, int status_fd,
                       const std::function<void(std::string_view)>& on_output,
                       std::string& held_output) {
    std::string status_text;
    bool started = false;
    pollfd fds[2] = {{output_fd, POLLIN, 0}, {status_fd, POLLIN, 0}};
    char buf[65536];
    int open_fds = 2;
    while (open_fds > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (auto& p : fds) {
            if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = ::read(p.fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                p.fd = -1;
                --open_fds;
                continue;
            }
            std::string_view chunk(buf, static_cast<size_t>(n));
            if (p.fd == status_fd) {
                status_text.append(chunk);
                if (!started && status_text.find("child-pid") != std::string::npos) {
                    started = true;
                    if (!held_output.empty()) on_output(held_output);
                    held_output.clear();
                }
            } else if (started) {
                on_output(chunk);
            } else {
                held_output.append(chunk);
            }
        }
    }
    return started;
}

}  // namespace

std::vector<std::string> sandbox_argv(const SandboxPolicy& policy, const std::string& cwd,
                                      const std::vector<std::string>& command) {
    std::vector<std::string> argv = {find_in_path("bwrap")};
    RealHostFs host;
    for (auto& a : bwrap_arguments(policy, host, cwd)) argv.push_back(std::move(a));
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

SandboxResult FreshSandbox::run(const std::string& command, const CommandIo& io) {
    if (auto reason = sandbox_unavailable_reason()) throw SandboxStartError(*reason);
    std::vector<std::string> argv = sandbox_argv(spec_.policy, spec_.cwd, {spec_.shell, "-c", command});
    argv.insert(argv.end() - 4, {"--json-status-fd", std::to_string(kStatusFd)});

    int out[2], status[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0)
        throw SandboxStartError(std::string("cannot create a pipe: ") + std::strerror(errno));
    UniqueFd out_read(out[0]), out_write(out[1]), status_read(status[0]), status_write(status[1]);
    UniqueFd input(io.stdin_from_terminal ? ::dup(STDIN_FILENO)
                                          : ::open("/dev/null", O_RDONLY | O_CLOEXEC));
    pid_t pid = spawn_process(argv, spec_.env,
                              {{input.get(), STDIN_FILENO},
                               {out_write.get(), STDOUT_FILENO},
                               {out_write.get(), STDERR_FILENO},
                               {status_write.get(), kStatusFd}});
    if (pid < 0) throw SandboxStartError(std::string("cannot fork: ") + std::strerror(errno));
    out_write.reset();
    status_write.reset();

    std::string held_output;
    auto on_output = io.on_output ? io.on_output : [](std::string_view) {};
    bool started = pump_until_closed(out_read.get(), status_read.get(), on_output, held_output);
    SandboxResult result;
    result.exit_code = wait_for_exit(pid);
    result.cwd = spec_.cwd;
    if (!started) {
        while (!held_output.empty() && held_output.back() == '\n') held_output.pop_back();
        throw SandboxStartError("the sandbox could not start" +
                                (held_output.empty() ? std::string() : ": " + held_output));
    }
    return result;
}

}  // namespace caretz
