#include "sandbox/sandbox_session.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "hooks/shell_launch.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/fresh_sandbox.h"
#include "sandbox/namespace_binds.h"
#include "sandbox/network/network_forwarder.h"
#include "sandbox/network/network_proxy.h"
#include "sandbox/phase_times.h"
#include "sandbox/preflight.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/session_supervisor.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

constexpr int kStatusFd = 4;
const std::string kSupervisorPath = std::string(kRuntimeDir) + "/caretz";

// Where bwrap finds open_inside_executable() to bind in as the supervisor.
constexpr int kExecutableFd = 5;

// Where bwrap finds the session shell's hook files, one descriptor each from here on.
constexpr int kFirstHookFileFd = 20;

// The session shell's hook files (hooks/shell_launch.h) for bwrap to put in kHookDir before
// anything runs: the supervisor starts every shell of the session from them, and no command can
// change what a later shell reads.
struct HookFiles {
    std::vector<UniqueFd> fds;  // the i-th goes to kFirstHookFileFd + i
    // Their folder in the sandbox's root with a copy of each, read-only once the root is: no
    // mount at all, where a read-only bind of each would cost bwrap a pass over the mount table
    // per file.
    std::vector<std::string> args;
};

HookFiles session_hook_files(const std::string& shell, const std::string& home) {
    const std::string dir = kHookDir;
    ShellLaunch launch;
    try {
        launch = shell_launch(shell, dir, home);
    } catch (const UnsupportedShell& e) {
        throw SandboxStartError(e.what());
    }
    HookFiles files;
    files.args = {"--dir", dir};
    for (const auto& [path, content] : launch.files) {
        int fd = kFirstHookFileFd + static_cast<int>(files.fds.size());
        files.fds.push_back(sealed_memory_file("caretz-hook", content));
        for (std::string arg : {std::string("--perms"), std::string("0444"), std::string("--file"),
                                std::to_string(fd), path})
            files.args.push_back(std::move(arg));
    }
    return files;
}

// Blocks until bwrap reports that the sandboxed process started, with its pid on the host in
// `child`, or returns bwrap's complaint when it gave up.
std::optional<std::string> wait_for_start(int status_fd, int errors_fd, pid_t& child) {
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
    // {"child-pid": 1234, ...}: complete once the number is followed by more.
    auto key = status.find("child-pid");
    while (status.find_first_of(",}\n", key) == std::string::npos) {
        ssize_t n = ::read(status_fd, buf, sizeof buf);
        if (n <= 0) break;
        status.append(buf, static_cast<size_t>(n));
    }
    auto digits = status.find_first_of("0123456789", key);
    child = digits == std::string::npos ? -1 : std::atoi(status.c_str() + digits);
    return std::nullopt;
}

}  // namespace

// Turns the shell's marks into the session's phases, and the command's output into its result.
class SandboxSession::Events : public MarkParser::Handler {
public:
    explicit Events(SandboxSession& session) : session_(session) {}

    // The command's output is passed on once per read from the supervisor (on_ready calls
    // flush() at its end), not once per frame: a flood of output then costs one write to the
    // terminal for several frames. Whether bytes are the command's is decided as they arrive,
    // so the marks among them need no flush of their own.
    void on_output(std::string_view bytes) override {
        const CommandIo* io = session_.running_io_;
        if (session_.phases_.command_running() && io && io->on_output) pending_.append(bytes);
    }
    void flush() {
        if (pending_.empty()) return;
        session_.running_io_->on_output(pending_);  // set, with on_output, since the append
        pending_.clear();
    }
    void on_prompt_start() override { session_.phases_.prompt_start(); }
    void on_prompt_end() override { session_.phases_.prompt_end(); }
    void on_command_start() override {
        // A shell's first command starts once the shell has read the user's rc.
        if (std::exchange(session_.shell_starting_, false))
            phase_done("shell start, the user's rc");
        session_.phases_.command_start();
    }
    void on_unread_lines(int lines) override { session_.unread_lines_ = lines; }
    void on_command_done(int status) override { session_.phases_.command_done(status); }
    void on_cwd(std::string path) override { session_.cwd_ = std::move(path); }

private:
    SandboxSession& session_;
    std::string pending_;
};

SandboxSession::SandboxSession(const SandboxSpec& spec)
    : nonce_(random_hex(16)),
      marks_(std::make_unique<MarkParser>(nonce_)),
      cwd_(spec.cwd),
      size_(spec.size),
      repositories_(spec.repositories),
      spec_read_only_(spec.policy.read_only),
      exact_output_(spec.exact_output) {
    const SandboxPolicy policy = with_protected_since(spec.policy, repositories_.get());
    if (auto reason = hidden_cwd_problem(policy, spec.cwd)) throw SandboxStartError(*reason);
    HookFiles hook_files = session_hook_files(spec.shell, policy.home);
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
    UniqueFd executable = open_inside_executable();
    UniqueFd seccomp = terminal_injection_filter();

    SpawnOptions options;
    options.stdin_fd = null_in.get();
    options.stdout_fd = errors_write.get();
    options.stderr_fd = errors_write.get();
    options.fds = {{child_end.get(), kSupervisorControlFd},
                   {status_write.get(), kStatusFd},
                   {executable.get(), kExecutableFd},
                   {seccomp.get(), kSeccompFd}};
    for (size_t i = 0; i < hook_files.fds.size(); ++i)
        options.fds.emplace_back(hook_files.fds[i].get(), kFirstHookFileFd + static_cast<int>(i));
    options.env = with_proxy_environment(spec.env);
    options.own_process_group = true;
    BwrapLaunch bwrap(policy, spec.cwd, {kSupervisorPath, "__supervise"}, options, hook_files.args);
    phase_done("bwrap arguments, bwrap launched");
    child_end.reset();
    status_write.reset();
    errors_write.reset();
    // Made while bwrap loads and starts; it reads its arguments only then. (Made on a thread
    // of their own, beside the arguments, they were no sooner: on two CPUs that thread held
    // back bwrap's start.)
    proxy_ = start_network_proxy(policy);
    run_watch_ = RunWatch::create(watched_programs(spec));
    bwrap_pid_ = bwrap.finish(
        caretz_binds(policy, kStatusFd, kExecutableFd, kSupervisorPath, *proxy_, run_watch_.get()));
    cache_layer_ = bwrap.cache_layer();
    phase_done("proxy, stand-ins");
    pid_t inside = -1;
    if (auto failure = wait_for_start(status_.get(), errors_.get(), inside)) {
        wait_for_exit(bwrap_pid_);
        bwrap_pid_ = -1;
        if (auto reason = sandbox_unavailable_reason()) throw SandboxStartError(*reason);
        throw SandboxStartError("the sandbox could not start: " + *failure);
    }
    phase_done("bwrap start");
    if (spec.cache_store_use) spec.cache_store_use->note_sandbox(bwrap_pid_, inside);
    watch_repositories(inside);

    // The shell starts with the first command (run()), which needs no prompt before it.
    std::string setup = nonce_;
    for (const std::string& part :
         {spec.shell, policy.home, std::string(spec.exact_output ? "exact" : "terminal")})
        setup += '\0' + part;
    send_frame(control_.get(), Frame::setup, setup);
    resize(size_);
}

void SandboxSession::watch_repositories(pid_t inside) {
    if (!repositories_ || spec_read_only_) return;
    // Held from the start: the pid could name another process once the sandbox has gone.
    mount_ns_.reset(
        ::open(("/proc/" + std::to_string(inside) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    const int ns = mount_ns_.get();
    repositories_->attach(this, [ns](const std::vector<std::string>& read_only) {
        return ns < 0 ? std::string("the sandbox's mount namespace cannot be opened")
                      : bind_in_sandbox(ns, read_only);
    });
}

std::vector<RepositoryFinding> SandboxSession::secure_repositories() {
    return repositories_ ? repositories_->check() : std::vector<RepositoryFinding>{};
}

void SandboxSession::begin_changes() {
    if (repositories_) repositories_->begin_changes();
}

std::optional<ChangeList> SandboxSession::end_changes() {
    return repositories_ ? repositories_->end_changes() : std::nullopt;
}

SandboxSession::~SandboxSession() {
    if (repositories_) repositories_->detach(this);
    control_.reset();  // the supervisor sees EOF and ends, and with it the sandbox
    utmp_.reset();     // meanwhile
    // Everything in the sandbox is about to go: the proxy's connections with it. Its thread
    // winds down while bwrap does; the proxy is joined with the members, after any wait below.
    proxy_->begin_stop();
    // When Caretz exits next, the supervisor's end, bwrap's and the kernel's teardown of the
    // sandbox's namespaces go on after it rather than before (1 to 2 ms of a one-shot
    // `caretz exec`); bwrap's --die-with-parent ends whatever is left.
    if (bwrap_pid_ <= 0 || !wait_at_end_) return;
    // Wait for bwrap on a pidfd, so the usual quick exit costs no polling sleep; a sandbox
    // that is still there after a second is killed.
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, bwrap_pid_, 0)));
    if (pidfd.valid()) {
        pollfd p{pidfd.get(), POLLIN, 0};
        while (::poll(&p, 1, 1000) < 0 && errno == EINTR) {
        }
    }
    int status;
    if (::waitpid(bwrap_pid_, &status, WNOHANG) == bwrap_pid_) return;
    ::kill(bwrap_pid_, SIGKILL);
    wait_for_exit(bwrap_pid_);
}

void SandboxSession::resize(WindowSize size) {
    size_ = size;
    send_frame(control_.get(), Frame::resize,
               std::to_string(size.rows) + "x" + std::to_string(size.cols));
}

SandboxResult SandboxSession::run(const std::string& command, const CommandIo& io) {
    ForegroundCommand foreground(proxy_.get(), io.may_ask_network);
    // The window may have changed while no command ran (Caretz's prompt was waiting).
    if (auto now = io.terminal ? io.terminal->size() : std::nullopt) {
        if (now->rows != size_.rows || now->cols != size_.cols) resize(*now);
    }
    const std::string payload = (io.stdin_from_terminal ? "T" : "N") + command;
    // The shell's prompt, or its end (then a fresh one runs the command).
    if (shell_alive_) pump_until(CommandIo{}, [&] { return phases_.idle(); });
    // A background job's runs, while no command was running, are no command's.
    if (run_watch_) run_watch_->discard();
    const bool fresh_shell = !shell_alive_;
    if (fresh_shell) {
        marks_ = std::make_unique<MarkParser>(nonce_);
        phases_.shell_started();
        start_shell(cwd_ + '\0' + payload);
        std::exchange(cache_layer_, {}).put_in();
        shell_alive_ = true;
    } else {
        phase_done("prompt");
        send_frame(control_.get(), Frame::run, payload);
        phases_.command_sent();
    }
    unread_lines_ = 0;
    // Done at the end mark: the prompt the shell draws next (the user's prompt code, a git
    // status in it) is no part of the command, and the next command waits for it.
    const std::string keys = pump_until(io, [&] { return phases_.command_over(); });
    if (fresh_shell && phases_.shell_exited() && !phases_.command_started()) {
        throw SandboxStartError("the session shell exited while starting (status " +
                                std::to_string(phases_.exit_code().value_or(0)) + ")");
    }
    give_back_unread_lines(io, keys, unread_lines_);  // counted by the shell's hook
    SandboxResult result;
    result.exit_code = phases_.exit_code().value_or(0);
    result.shell_exited = phases_.shell_exited();
    result.cwd = cwd_;
    if (run_watch_) result.program_runs = run_watch_->take();
    return result;
}

void SandboxSession::start_shell(const std::string& payload) {
    // Opened here, on the host, and passed to the supervisor: a PTY of the sandbox's own
    // /dev/pts would name nothing that `who` could show, and libutempter's helper (setgid utmp,
    // which no-new-privileges takes away in the sandbox) can only record it from here.
    Pty pty = Pty::open(size_, exact_output_);
    if (!send_frame(control_.get(), Frame::start_shell, payload, {pty.master(), pty.slave()}))
        throw SandboxStartError(unexpected_end());
    // Recorded while the shell starts, and only for a session on a terminal, where a user works.
    utmp_.reset();
    if (!exact_output_) utmp_.emplace(pty.master(), "caretz");
}

template <typename Done>
std::string SandboxSession::pump_until(const CommandIo& io, Done done) {
    // Output goes to `io` for as long as this pump moves it, whichever way it ends.
    struct Running {
        const CommandIo*& slot;
        ~Running() { slot = nullptr; }
    } running{running_io_ = &io};
    CommandPump pump(*this, io, &proxy_->gate(), /*output_from_pty=*/!exact_output_);
    while (!done()) {
        if (!pump.step()) throw SandboxStartError(unexpected_end());
    }
    return std::string(pump.keys_sent());
}

void SandboxSession::watch(std::vector<pollfd>& fds) const {
    fds.push_back({control_.get(), POLLIN, 0});
    fds.push_back({errors_.get(), POLLIN, 0});
}

bool SandboxSession::on_ready(size_t index) {
    if (index == 1) {
        char drain[4096];
        ssize_t n = ::read(errors_.get(), drain, sizeof drain);
        if (n <= 0) {
            errors_.reset();
        } else {
            // The last of what bwrap and the supervisor said, for an end nobody expected.
            bwrap_errors_.append(std::string_view(drain, static_cast<size_t>(n)));
        }
        return true;
    }
    if (!reader_.read_from(control_.get())) return false;
    Events events(*this);
    while (auto m = reader_.next()) {
        if (m->type == Frame::output) {
            marks_->feed(m->payload, events);
        } else if (m->type == Frame::job_reply) {
            job_reply_ = std::move(m->payload);
        } else if (m->type == Frame::shell_started) {
            phase_done("sandbox mounts, supervisor start");
            shell_starting_ = true;
            // The supervisor runs once the sandbox's mounts are all in place, so the host no
            // longer needs the proxy socket's path, nor the run records file's.
            proxy_->remove_socket_path();
            if (run_watch_) run_watch_->forget_path();
        } else if (m->type == Frame::shell_exited) {
            marks_->flush(events);
            phases_.shell_exit(std::atoi(m->payload.c_str()));
            shell_alive_ = false;
            utmp_.reset();
        }
    }
    events.flush();
    return true;
}

std::string SandboxSession::unexpected_end() {
    // What is still in the error pipe (bwrap has ended, or is about to) comes first.
    pollfd p{errors_.get(), POLLIN, 0};
    while (errors_.valid() && ::poll(&p, 1, 100) > 0) on_ready(1);
    std::string said(bwrap_errors_.view());
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    if (auto line = said.rfind('\n'); line != std::string::npos) said.erase(0, line + 1);
    return "the sandbox session ended unexpectedly" + (said.empty() ? "" : ": " + said);
}

void SandboxSession::send_keys(std::string_view keys) {
    send_frame(control_.get(), Frame::input, keys);
}

// The session's terminal turns the key into the signal for the command's process group.
void SandboxSession::send_interrupt(char key) {
    send_frame(control_.get(), Frame::input, std::string_view(&key, 1));
}

std::string SandboxSession::ask_supervisor(Frame type, const std::string& payload) {
    job_reply_.reset();
    if (!send_frame(control_.get(), type, payload)) throw SandboxStartError(unexpected_end());
    std::exchange(cache_layer_, {}).put_in();
    pump_until(CommandIo{}, [&] { return job_reply_.has_value(); });
    return *std::exchange(job_reply_, std::nullopt);
}

int SandboxSession::start(const std::string& command) {
    int id = ++last_job_id_;
    std::string reply =
        ask_supervisor(Frame::job_start, std::to_string(id) + '\0' + cwd_ + '\0' + command);
    if (reply != kJobOk) {
        const std::string prefix = "error ";
        throw SandboxStartError("the background job could not start: " +
                                (reply.starts_with(prefix) ? reply.substr(prefix.size()) : reply));
    }
    return id;
}

std::optional<JobReport> SandboxSession::report(int id) {
    return decode_job_report(ask_supervisor(Frame::job_output, std::to_string(id)));
}

std::optional<JobReport> SandboxSession::status(int id) {
    return decode_job_report(ask_supervisor(Frame::job_status, std::to_string(id)));
}

bool SandboxSession::kill(int id) {
    return ask_supervisor(Frame::job_kill, std::to_string(id)) == kJobOk;
}

}  // namespace caretz
