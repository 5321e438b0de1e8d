#include "sandbox/sandboxed_command.h"

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

namespace caretz {

namespace {

constexpr int kStatusFd = 3;

std::vector<char*> c_strings(std::vector<std::string>& items) {
    std::vector<char*> out;
    for (auto& s : items) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

int exit_status(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return 1;
}

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

int run_in_fresh_sandbox(const SandboxPolicy& policy, const std::string& cwd,
                         const std::vector<std::string>& command, const Environment& env,
                         const std::function<void(std::string_view)>& on_output) {
    if (auto reason = sandbox_unavailable_reason()) throw SandboxStartError(*reason);
    std::vector<std::string> argv = sandbox_argv(policy, cwd, command);
    argv.insert(argv.end() - static_cast<long>(command.size()) - 1,
                {"--json-status-fd", std::to_string(kStatusFd)});
    std::vector<std::string> envs = environment_strings(env);

    int out[2], status[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0)
        throw SandboxStartError(std::string("cannot create a pipe: ") + std::strerror(errno));
    UniqueFd out_read(out[0]), out_write(out[1]), status_read(status[0]), status_write(status[1]);

    auto c_argv = c_strings(argv);
    auto c_env = c_strings(envs);
    pid_t pid = ::fork();
    if (pid < 0) throw SandboxStartError(std::string("cannot fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::dup2(out_write.get(), STDOUT_FILENO);
        ::dup2(out_write.get(), STDERR_FILENO);
        ::dup2(status_write.get(), kStatusFd);
        ::execve(c_argv[0], c_argv.data(), c_env.data());
        ::_exit(127);
    }
    out_write.reset();
    status_write.reset();

    std::string setup_errors;
    bool started = pump_until_closed(out_read.get(), status_read.get(), on_output, setup_errors);
    int wait_status = 0;
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    if (!started) {
        while (!setup_errors.empty() && setup_errors.back() == '\n') setup_errors.pop_back();
        throw SandboxStartError("the sandbox could not start" +
                                (setup_errors.empty() ? std::string() : ": " + setup_errors));
    }
    return exit_status(wait_status);
}

}  // namespace caretz
