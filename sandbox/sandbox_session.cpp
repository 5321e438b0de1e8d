#include "sandbox/sandbox_session.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "sandbox/preflight.h"
#include "sandbox/fresh_sandbox.h"
#include "sandbox/session_supervisor.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

constexpr int kStatusFd = 4;
constexpr const char* kSupervisorPath = "/tmp/.caretz/caretz";

std::string own_executable() {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) throw SandboxStartError("cannot find Caretz's own executable");
    return std::string(buf, static_cast<size_t>(n));
}

// Blocks until bwrap reports that the sandboxed process started, or returns bwrap's
// complaint when it gave up.
std::optional<std::string> wait_for_start(int status_fd, int errors_fd) {
    std::string status, errors;
    char buf[4096];
    pollfd fds[2] = {{status_fd, POLLIN, 0}, {errors_fd, POLLIN, 0}};
    while (status.find("child-pid") == std::string::npos) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return std::string(std::strerror(errno));
        }
        if (fds[1].revents & POLLIN) {
            ssize_t n = ::read(errors_fd, buf, sizeof buf);
            if (n > 0) errors.append(buf, static_cast<size_t>(n));
        }
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            ssize_t n = ::read(status_fd, buf, sizeof buf);
            if (n <= 0) {
                while (!errors.empty() && errors.back() == '\n') errors.pop_back();
                return errors.empty() ? "bwrap exited" : errors;
            }
            status.append(buf, static_cast<size_t>(n));
        }
    }
    return std::nullopt;
}

}  // namespace

// Turns the shell's marks into the session's phases and the command's result.
class SandboxSession::Events : public MarkParser::Handler {
public:
    Events(SandboxSession& session, const CommandIo* io, SandboxResult* result)
        : session_(session), io_(io), result_(result) {}

    void on_output(std::string_view bytes) override {
        if (session_.phase_ == Phase::running && io_ && io_->on_output) io_->on_output(bytes);
    }
    void on_prompt_end() override {
        if (session_.phase_ == Phase::starting || session_.phase_ == Phase::finishing)
            session_.phase_ = Phase::idle;
    }
    void on_command_start() override {
        if (session_.phase_ == Phase::sent) session_.phase_ = Phase::running;
    }
    void on_command_done(int status) override {
        if (session_.phase_ != Phase::running) return;
        if (result_) result_->exit_code = status;
        session_.phase_ = Phase::finishing;
    }
    void on_cwd(std::string path) override { session_.cwd_ = std::move(path); }

private:
    SandboxSession& session_;
    const CommandIo* io_;
    SandboxResult* result_;
};

SandboxSession::SandboxSession(const SandboxPolicy& policy, const Environment& env,
                               const std::string& shell, const std::string& cwd, WindowSize size)
    : nonce_(random_hex(16)), marks_(std::make_unique<MarkParser>(nonce_)), cwd_(cwd) {
    if (auto reason = sandbox_unavailable_reason()) throw SandboxStartError(*reason);
    std::vector<std::string> argv = sandbox_argv(policy, cwd, {kSupervisorPath, "__supervise"});
    argv.insert(argv.end() - 3, {"--json-status-fd", std::to_string(kStatusFd), "--ro-bind",
                                 own_executable(), kSupervisorPath});

    int sockets[2], status[2], errors[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0 ||
        ::pipe2(status, O_CLOEXEC) != 0 || ::pipe2(errors, O_CLOEXEC) != 0)
        throw SandboxStartError(std::string("cannot create the session's pipes: ") +
                                std::strerror(errno));
    control_.reset(sockets[0]);
    errors_.reset(errors[0]);
    status_.reset(status[0]);
    UniqueFd child_end(sockets[1]), status_write(status[1]), errors_write(errors[1]);
    UniqueFd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));

    bwrap_pid_ = spawn_process(argv, env,
                               {{null_in.get(), STDIN_FILENO},
                                {errors_write.get(), STDOUT_FILENO},
                                {errors_write.get(), STDERR_FILENO},
                                {child_end.get(), kSupervisorControlFd},
                                {status_write.get(), kStatusFd}},
                               true);
    if (bwrap_pid_ < 0) throw SandboxStartError(std::string("cannot fork: ") + std::strerror(errno));
    child_end.reset();
    status_write.reset();
    errors_write.reset();
    if (auto failure = wait_for_start(status_.get(), errors_.get())) {
        wait_for_exit(bwrap_pid_);
        bwrap_pid_ = -1;
        throw SandboxStartError("the sandbox could not start: " + *failure);
    }

    std::string setup = nonce_;
    for (const std::string& part : {shell, policy.home, cwd}) setup += '\0' + part;
    send_frame(control_.get(), Frame::restart, setup);
    resize(size);
    shell_alive_ = true;
}

SandboxSession::~SandboxSession() {
    control_.reset();  // the supervisor sees EOF and ends, and with it the sandbox
    if (bwrap_pid_ <= 0) return;
    for (int i = 0; i < 100; ++i) {
        int status;
        if (::waitpid(bwrap_pid_, &status, WNOHANG) == bwrap_pid_) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(bwrap_pid_, SIGKILL);
    wait_for_exit(bwrap_pid_);
}

void SandboxSession::resize(WindowSize size) {
    send_frame(control_.get(), Frame::resize,
               std::to_string(size.rows) + "x" + std::to_string(size.cols));
}

void SandboxSession::restart_shell() {
    marks_ = std::make_unique<MarkParser>(nonce_);
    phase_ = Phase::starting;
    send_frame(control_.get(), Frame::restart, cwd_);
    shell_alive_ = true;
}

SandboxResult SandboxSession::run(const std::string& command, const CommandIo& io) {
    SandboxResult result;
    if (!shell_alive_) restart_shell();
    wait_until_ready(io, result);
    if (result.shell_exited) return result;

    send_frame(control_.get(), Frame::run, (io.stdin_from_terminal ? "T" : "N") + command);
    phase_ = Phase::sent;
    while (phase_ != Phase::idle && !result.shell_exited) {
        if (!pump(io, result)) throw SandboxStartError("the sandbox session ended unexpectedly");
    }
    result.cwd = cwd_;
    return result;
}

void SandboxSession::wait_until_ready(const CommandIo& io, SandboxResult& result) {
    CommandIo quiet;
    quiet.take_resize = io.take_resize;
    while (phase_ != Phase::idle) {
        if (!pump(quiet, result)) throw SandboxStartError("the sandbox session ended unexpectedly");
        if (result.shell_exited) {
            throw SandboxStartError("the session shell exited while starting (status " +
                                    std::to_string(result.exit_code) + ")");
        }
    }
}

// Waits for the next event from the supervisor or the terminal; false if the sandbox is gone.
bool SandboxSession::pump(const CommandIo& io, SandboxResult& result) {
    const bool forward = io.input_fd >= 0 && !input_closed_ && (phase_ == Phase::sent || phase_ == Phase::running);
    pollfd fds[3] = {{control_.get(), POLLIN, 0},
                     {errors_.get(), POLLIN, 0},
                     {forward ? io.input_fd : -1, POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
        if (errno == EINTR && io.take_resize) {
            if (auto size = io.take_resize()) resize(*size);
        }
        return true;
    }
    if (fds[1].revents & (POLLIN | POLLHUP)) {
        char drain[4096];
        if (::read(errors_.get(), drain, sizeof drain) <= 0) errors_.reset();
    }
    if (fds[2].revents & POLLIN) forward_input(io);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (!reader_.read_from(control_.get())) return false;
        Events events(*this, &io, &result);
        while (auto m = reader_.next()) {
            if (m->type == Frame::output) {
                marks_->feed(m->payload, events);
            } else if (m->type == Frame::shell_exited) {
                marks_->flush(events);
                if (phase_ != Phase::finishing) result.exit_code = std::atoi(m->payload.c_str());
                result.shell_exited = true;
                shell_alive_ = false;
                phase_ = Phase::idle;
            }
        }
    }
    return true;
}

void SandboxSession::forward_input(const CommandIo& io) {
    char buf[4096];
    ssize_t n = ::read(io.input_fd, buf, sizeof buf);
    if (n == 0) input_closed_ = true;
    if (n <= 0) return;
    std::string keys(buf, static_cast<size_t>(n));
    if (!io.stdin_from_terminal) {
        std::string signals;
        for (char c : keys)
            if (c == '\x03' || c == '\x1c') signals += c;
        keys = signals;
    }
    if (!keys.empty()) send_frame(control_.get(), Frame::input, keys);
}

}  // namespace caretz
