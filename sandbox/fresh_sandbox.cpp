#include "sandbox/fresh_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "pty/fd_io.h"
#include "pty/pty.h"
#include "pty/unique_fd.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/host_fs.h"
#include "sandbox/network_forwarder.h"
#include "sandbox/network_proxy.h"
#include "sandbox/preflight.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

constexpr int kStatusFd = 3;
// Where bwrap finds open_own_executable(), and where the sandbox sees it.
constexpr int kExecutableFd = 4;
const std::string kForwarderPath = std::string(kRuntimeDir) + "/caretz";

// One command's traffic until it ends: its output (a pipe, or the master of the PTY it runs
// on), bwrap's status pipe, the keys from the user's terminal, and the network question gate.
class Pump {
public:
    // `to_command` is the PTY master that takes the user's keys; -1 when the command reads
    // nothing from the user (its stdin is /dev/null), and only Ctrl-C and Ctrl-\ count.
    Pump(int output_fd, int status_fd, int to_command, QuestionGate& gate, const CommandIo& io)
        : output_fd_(output_fd),
          status_fd_(status_fd),
          to_command_(to_command),
          gate_(gate),
          io_(io) {}

    // Reads until the output and the status pipe are both closed. bwrap reports "child-pid"
    // on the status pipe only once the sandbox is set up; output that arrives before that is
    // held back, and becomes the error message if the report never comes. Returns whether
    // the sandbox started.
    bool run(std::string& held_output) {
        auto on_output = io_.on_output ? io_.on_output : [](std::string_view) {};
        pollfd fds[4] = {{output_fd_, POLLIN, 0},
                         {status_fd_, POLLIN, 0},
                         {gate_.fd(), POLLIN, 0},
                         {io_.input_fd, POLLIN, 0}};
        char buf[65536];
        while (fds[0].fd >= 0 || fds[1].fd >= 0) {
            if (interrupt_repeat_.take_due() && command_pid_ > 0) ::kill(-command_pid_, repeat_signal_);
            if (::poll(fds, 4, interrupt_repeat_.ms_until_due()) < 0) {
                if (errno != EINTR) break;
                if (io_.take_resize && to_command_ >= 0)
                    if (auto size = io_.take_resize()) set_window_size(to_command_, *size);
                continue;
            }
            // While a network question is on screen, neither the keys nor the output move.
            if (fds[2].revents & POLLIN) {
                gate_.hold();
                continue;
            }
            if (fds[3].revents & (POLLIN | POLLHUP | POLLERR)) {
                ssize_t n = ::read(fds[3].fd, buf, sizeof buf);
                if (n > 0) {
                    keys(std::string_view(buf, static_cast<size_t>(n)));
                } else if (n == 0 || errno != EINTR) {
                    hang_up_on_lost_terminal(fds[3].fd);
                    fds[3].fd = -1;
                }
            }
            for (int i : {0, 1}) {
                pollfd& p = fds[i];
                if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
                ssize_t n = ::read(p.fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) {  // EOF, or EIO from a PTY whose command has ended
                    p.fd = -1;
                    continue;
                }
                std::string_view chunk(buf, static_cast<size_t>(n));
                if (i == 1) {
                    status(chunk, held_output, on_output);
                } else if (started_) {
                    on_output(chunk);
                } else {
                    held_output.append(chunk);
                }
            }
        }
        return started_;
    }

private:
    void status(std::string_view chunk, std::string& held_output,
                const std::function<void(std::string_view)>& on_output) {
        status_text_.append(chunk);
        if (started_) return;
        auto at = status_text_.find("\"child-pid\"");
        if (at == std::string::npos) return;
        auto colon = status_text_.find(':', at);
        if (colon == std::string::npos || status_text_.find('\n', colon) == std::string::npos)
            return;  // the rest of the line is still on its way
        started_ = true;
        // bwrap started the command with --new-session: its pid leads its process group.
        command_pid_ = static_cast<pid_t>(std::atol(status_text_.c_str() + colon + 1));
        if (!held_output.empty()) on_output(held_output);
        held_output.clear();
    }

    // bwrap's --new-session leaves the command without a controlling terminal, so no terminal
    // turns Ctrl-C and Ctrl-\ into signals; Caretz, which reads the keys, sends them itself.
    void keys(std::string_view typed) {
        std::string for_command;
        int interrupted = 0;
        for (char c : typed) {
            if (int sig = signal_for_key(c)) {
                if (command_pid_ > 0) ::kill(-command_pid_, sig);
                interrupted = sig;
            } else {
                for_command += c;
            }
        }
        if (to_command_ >= 0 && !for_command.empty()) write_all(to_command_, for_command);
        if (interrupted && to_command_ < 0) {
            // A command the user does not type into (the model's) is stopped, not told.
            repeat_signal_ = interrupted;
            interrupt_repeat_.start();
            if (io_.on_interrupt_key) io_.on_interrupt_key();
        }
    }

    int output_fd_, status_fd_, to_command_;
    QuestionGate& gate_;
    const CommandIo& io_;
    std::string status_text_;
    bool started_ = false;
    pid_t command_pid_ = -1;
    int repeat_signal_ = 0;  // the interrupt to send again, once the user asked for one
    InterruptRepeat interrupt_repeat_;
};

}  // namespace

std::vector<std::string> sandbox_argv(const SandboxPolicy& policy, const std::string& cwd,
                                      const std::vector<std::string>& command) {
    std::vector<std::string> argv = {find_in_path("bwrap")};
    RealHostFs host;
    for (auto& a : bwrap_arguments(policy, host, cwd)) argv.push_back(std::move(a));
    argv.insert(argv.end(), {"--seccomp", std::to_string(kSeccompFd), "--"});
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

FreshSandbox::FreshSandbox(SandboxSpec spec)
    : spec_(std::move(spec)),
      env_(with_proxy_environment(spec_.env)),
      proxy_(start_network_proxy(spec_.policy)) {}

FreshSandbox::~FreshSandbox() = default;

SandboxResult FreshSandbox::run(const std::string& command, const CommandIo& io) {
    if (auto reason = sandbox_unavailable_reason()) throw SandboxStartError(*reason);
    const std::vector<std::string> inside = {kForwarderPath, "__netforward", spec_.shell, "-c",
                                             command};
    std::vector<std::string> argv = sandbox_argv(spec_.policy, spec_.cwd, inside);
    std::vector<std::string> extra = {"--json-status-fd", std::to_string(kStatusFd), "--ro-bind",
                                      "/proc/self/fd/" + std::to_string(kExecutableFd),
                                      kForwarderPath};
    for (auto& a : proxy_bind_arguments(proxy_->socket_path())) extra.push_back(std::move(a));
    // Before the "--" that ends bwrap's own options.
    argv.insert(argv.end() - static_cast<long>(inside.size()) - 1, extra.begin(), extra.end());

    // The user's own commands run on a PTY of their own, so they see a terminal (echo, line
    // editing, window size) and Caretz stays the only reader of the real one; the model's get
    // /dev/null and a pipe.
    const bool on_pty = io.stdin_from_terminal && io.input_fd >= 0;
    std::optional<Pty> pty;
    if (on_pty) pty.emplace(Pty::open(terminal_size(io.input_fd).value_or(spec_.size)));
    int out[2], status[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0)
        throw SandboxStartError(std::string("cannot create a pipe: ") + std::strerror(errno));
    UniqueFd out_read(out[0]), out_write(out[1]), status_read(status[0]), status_write(status[1]);
    UniqueFd null_input(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int command_in = on_pty ? pty->slave() : null_input.get();
    const int command_out = on_pty ? pty->slave() : out_write.get();
    UniqueFd seccomp = terminal_injection_filter();
    UniqueFd executable = open_own_executable();
    pid_t pid = spawn_process(argv, env_,
                              {{command_in, STDIN_FILENO},
                               {seccomp.get(), kSeccompFd},
                               {command_out, STDOUT_FILENO},
                               {command_out, STDERR_FILENO},
                               {status_write.get(), kStatusFd},
                               {executable.get(), kExecutableFd}});
    if (pid < 0) throw SandboxStartError(std::string("cannot fork: ") + std::strerror(errno));
    // Only the command may hold its ends now, so they report EOF (EIO on a PTY) when it ends.
    out_write.reset();
    status_write.reset();
    if (pty) pty->close_slave();

    std::string held_output;
    bool started;
    {
        ForegroundCommand foreground(proxy_.get(), io.may_ask_network);
        Pump pump(pty ? pty->master() : out_read.get(), status_read.get(), pty ? pty->master() : -1,
                  proxy_->gate(), io);
        started = pump.run(held_output);
    }
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
