#include "sandbox/fresh_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
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
#include "sandbox/cache_layer.h"
#include "sandbox/command_pump.h"
#include "sandbox/host_fs.h"
#include "sandbox/layer_gate.h"
#include "sandbox/layer_mounts.h"
#include "sandbox/network/network_forwarder.h"
#include "sandbox/network/network_proxy.h"
#include "sandbox/phase_times.h"
#include "sandbox/preflight.h"
#include "sandbox/run_watch.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

constexpr int kStatusFd = 3;
// Where bwrap finds open_inside_executable(), and where the sandbox sees it.
constexpr int kExecutableFd = 4;
const std::string kForwarderPath = std::string(kRuntimeDir) + "/caretz";
// Where bwrap reads its arguments (`--args`) from.
constexpr int kArgumentsFd = 10;

// One command's traffic until it ends: its output (a pipe, or the master of the PTY it runs
// on) and bwrap's status pipe. bwrap reports "child-pid" on the status pipe only once the
// sandbox is set up; output that arrives before that is held back, and becomes the error
// message if the report never comes.
class FreshCommand : public PumpTarget {
public:
    // `to_command` is the PTY master that takes the user's keys; -1 when the command reads
    // nothing from the user (its stdin is /dev/null).
    FreshCommand(int output_fd, int status_fd, int to_command, const CommandIo& io)
        : output_fd_(output_fd), status_fd_(status_fd), to_command_(to_command), io_(io) {}

    bool finished() const { return output_fd_ < 0 && status_fd_ < 0; }
    bool started() const { return started_; }
    pid_t command_pid() const { return command_pid_; }
    std::string& held_output() { return held_output_; }

    void watch(std::vector<pollfd>& fds) const override {
        fds.push_back({output_fd_, POLLIN, 0});
        fds.push_back({status_fd_, POLLIN, 0});
    }
    bool on_ready(size_t index) override {
        int& fd = index == 0 ? output_fd_ : status_fd_;
        char buf[65536];
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) return true;
        if (n <= 0) {  // EOF, or EIO from a PTY whose command has ended
            fd = -1;
            return true;
        }
        std::string_view chunk(buf, static_cast<size_t>(n));
        if (index == 1) {
            status(chunk);
        } else if (started_) {
            output(chunk);
        } else {
            held_output_.append(chunk);
        }
        return true;
    }
    bool command_running() const override { return started_; }
    void send_keys(std::string_view keys) override {
        if (to_command_ >= 0) write_all(to_command_, keys);
    }
    // bwrap's --new-session leaves the command without a controlling terminal, so no terminal
    // turns Ctrl-C and Ctrl-\ into signals; Caretz, which reads the keys, sends them itself.
    // bwrap started the command with --new-session: its pid leads its process group.
    void send_interrupt(char key) override {
        if (command_pid_ > 0) ::kill(-command_pid_, signal_for_key(key));
    }
    void resize(WindowSize size) override {
        if (to_command_ >= 0) set_window_size(to_command_, size);
    }

private:
    void output(std::string_view bytes) {
        if (io_.on_output) io_.on_output(bytes);
    }

    void status(std::string_view chunk) {
        status_text_.append(chunk);
        if (started_) return;
        auto at = status_text_.find("\"child-pid\"");
        if (at == std::string::npos) return;
        auto colon = status_text_.find(':', at);
        if (colon == std::string::npos || status_text_.find('\n', colon) == std::string::npos)
            return;  // the rest of the line is still on its way
        started_ = true;
        command_pid_ = static_cast<pid_t>(std::atol(status_text_.c_str() + colon + 1));
        if (!held_output_.empty()) output(held_output_);
        held_output_.clear();
    }

    int output_fd_, status_fd_, to_command_;
    const CommandIo& io_;
    std::string status_text_;
    std::string held_output_;
    bool started_ = false;
    pid_t command_pid_ = -1;
};

}  // namespace

std::vector<std::string> caretz_binds(const SandboxPolicy& policy, int status_fd, int executable_fd,
                                      const std::string& inside, const NetworkProxy& proxy,
                                      const RunWatch* run_watch) {
    const std::string executable = "/proc/self/fd/" + std::to_string(executable_fd);
    std::vector<std::string> binds = {"--json-status-fd", std::to_string(status_fd), "--ro-bind",
                                      executable, inside};
    for (auto& a : proxy_bind_arguments(proxy.socket_path())) binds.push_back(std::move(a));
    if (run_watch) {
        RealHostFs host;
        for (auto& a : run_watch->bwrap_arguments(policy, host, executable))
            binds.push_back(std::move(a));
    }
    return binds;
}

BwrapLaunch::BwrapLaunch(const SandboxPolicy& policy, const std::string& cwd,
                         const std::vector<std::string>& command, SpawnOptions options,
                         const std::vector<std::string>& in_root) {
    RealHostFs host;
    std::vector<std::string> copied;
    policy_arguments_ = bwrap_arguments(policy, host, cwd, &copied, in_root);
    // A file that went away or cannot be read since is copied in empty.
    std::vector<UniqueFd> copied_files;
    for (const auto& path : copied) {
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
        if (!fd.valid()) fd.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        options.fds.emplace_back(fd.get(),
                                 kFirstCopiedFileFd + static_cast<int>(copied_files.size()));
        copied_files.push_back(std::move(fd));
    }
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
        throw SandboxStartError(std::string("cannot create a socket for bwrap: ") +
                                std::strerror(errno));
    arguments_.reset(sockets[0]);
    UniqueFd bwrap_end(sockets[1]);
    options.fds.emplace_back(bwrap_end.get(), kArgumentsFd);
    // The cache layer's overlays go in once bwrap has laid the sandbox out (finish()); a
    // read-only sandbox (a plan-mode command beside a session's) writes no cache, and a second
    // live overlay over the same upper folder would be undefined.
    UniqueFd gate_end;
    if (policy.cache_layer.how == CacheLayer::How::overlay && !policy.read_only &&
        !policy.cache_layer.folders.empty()) {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
            throw SandboxStartError(std::string("cannot create a socket for the cache layer: ") +
                                    std::strerror(errno));
        cache_layer_ = PendingCacheLayer(UniqueFd(sockets[0]), policy.cache_layer);
        gate_end.reset(sockets[1]);
        options.fds.emplace_back(gate_end.get(), kLayerGateFd);
    }
    std::vector<std::string> argv = {find_in_path("bwrap"), "--args", std::to_string(kArgumentsFd),
                                     "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    pid_ = spawn_process(argv, options);
    if (pid_ < 0) throw SandboxStartError(std::string("cannot fork: ") + std::strerror(errno));
}

BwrapLaunch::~BwrapLaunch() {
    if (!arguments_.valid() || pid_ < 0) return;
    // Never given its arguments: it is still waiting for them, and must not start anything.
    ::kill(pid_, SIGKILL);
    wait_for_exit(pid_);
}

pid_t BwrapLaunch::finish(const std::vector<std::string>& extra) {
    std::string data;
    auto add = [&data](const std::string& argument) {
        data += argument;
        data += '\0';
    };
    for (const auto& a : policy_arguments_) add(a);
    for (const auto& a : extra) add(a);
    add("--seccomp");
    add(std::to_string(kSeccompFd));
    // bwrap reads until the end: the whole list, then the end of the socket. If it has gone,
    // the send fails, and its start fails as it says on its stderr.
    send_all(arguments_.get(), data);
    arguments_.reset();
    try {
        cache_layer_.make();
    } catch (const SandboxStartError&) {
        cache_layer_ = {};  // given no go-ahead, the first program ends
        wait_for_exit(pid_);
        throw;
    }
    return pid_;
}

PendingCacheLayer::PendingCacheLayer(UniqueFd gate, CacheLayer layer)
    : gate_(std::move(gate)), layer_(std::move(layer)) {}

void PendingCacheLayer::make() {
    if (!gate_.valid()) return;
    mounts_ = make_layer_mounts(layer_);
    // The store's tidying too, once per process.
    if (mounts_.first) remove_stale_work_folders(layer_);
}

void PendingCacheLayer::put_in() {
    if (!gate_.valid()) return;
    // Closed at the end whatever happens: without the go-ahead the first program ends.
    const UniqueFd gate = std::move(gate_);
    const LayerMounts mounts = std::move(mounts_);
    if (std::string why = attach_cache_layer(gate.get(), mounts); !why.empty())
        throw SandboxStartError("cannot put the private cache layer in the sandbox: " + why);
}

FreshSandbox::FreshSandbox(SandboxSpec spec)
    : spec_(std::move(spec)),
      env_(with_proxy_environment(spec_.env)),
      proxy_(start_network_proxy(spec_.policy)),
      run_watch_(RunWatch::create(watched_programs(spec_))) {}

FreshSandbox::~FreshSandbox() = default;

std::vector<RepositoryFinding> FreshSandbox::secure_repositories() {
    return spec_.repositories ? spec_.repositories->check() : std::vector<RepositoryFinding>{};
}

void FreshSandbox::begin_changes() {
    if (spec_.repositories) spec_.repositories->begin_changes();
}

std::optional<ChangeList> FreshSandbox::end_changes() {
    return spec_.repositories ? spec_.repositories->end_changes() : std::nullopt;
}

SandboxResult FreshSandbox::run(const std::string& command, const CommandIo& io) {
    if (auto reason = hidden_cwd_problem(spec_.policy, spec_.cwd)) throw SandboxStartError(*reason);
    const std::vector<std::string> inside = {kForwarderPath, "__netforward", spec_.shell, "-c",
                                             command};
    const SandboxPolicy policy = with_protected_since(spec_.policy, spec_.repositories.get());

    // The user's own commands run on a PTY of their own, so they see a terminal (echo, line
    // editing, window size) and Caretz stays the only reader of the real one; the model's get
    // /dev/null and a pipe, and so does any command when Caretz has no terminal.
    const bool on_pty = io.stdin_from_terminal && io.terminal;
    std::optional<Pty> pty;
    if (on_pty) pty.emplace(Pty::open(io.terminal->size().value_or(spec_.size)));
    int out[2], status[2], lines[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0 ||
        ::pipe2(lines, O_CLOEXEC | O_NONBLOCK) != 0)
        throw SandboxStartError(std::string("cannot create a pipe: ") + std::strerror(errno));
    UniqueFd out_read(out[0]), out_write(out[1]), status_read(status[0]), status_write(status[1]);
    UniqueFd unread_read(lines[0]), unread_write(lines[1]);
    UniqueFd null_input(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    UniqueFd seccomp = terminal_injection_filter();
    UniqueFd executable = open_inside_executable();
    SpawnOptions options;
    options.stdin_fd = on_pty ? pty->slave() : null_input.get();
    options.stdout_fd = on_pty ? pty->slave() : out_write.get();
    options.stderr_fd = options.stdout_fd;
    options.fds = {{seccomp.get(), kSeccompFd},
                   {status_write.get(), kStatusFd},
                   {executable.get(), kExecutableFd}};
    if (on_pty) options.fds.emplace_back(unread_write.get(), kUnreadLinesFd);
    options.env = env_;
    BwrapLaunch bwrap(policy, spec_.cwd, inside, options);
    phase_done("bwrap arguments, bwrap launched");
    pid_t pid = bwrap.finish(
        caretz_binds(policy, kStatusFd, kExecutableFd, kForwarderPath, *proxy_, run_watch_.get()));
    try {
        bwrap.cache_layer().put_in();
    } catch (const SandboxStartError&) {
        wait_for_exit(pid);  // it ends, given no go-ahead
        throw;
    }
    phase_done("stand-ins");
    // Waited for below: its sandbox has ended with it (but see the pump).
    if (spec_.cache_store_use) spec_.cache_store_use->note_sandbox(pid, -1);
    // Only the command may hold its ends now, so they report EOF (EIO on a PTY) when it ends.
    out_write.reset();
    status_write.reset();
    unread_write.reset();
    if (pty) pty->close_slave();

    FreshCommand traffic(pty ? pty->master() : out_read.get(), status_read.get(),
                         pty ? pty->master() : -1, io);
    std::string keys;
    {
        ForegroundCommand foreground(proxy_.get(), io.may_ask_network);
        CommandPump pump(traffic, io, &proxy_->gate(), /*output_from_pty=*/on_pty);
        bool noted = false;
        while (!traffic.finished() && pump.step()) {
            // The cache layer's overlays end with the sandbox's first process, after bwrap
            // when Caretz is killed (bwrap goes first then): the next Caretz waits for both.
            if (!noted && traffic.started() && spec_.cache_store_use)
                spec_.cache_store_use->note_sandbox(pid, traffic.command_pid());
            noted = noted || traffic.started();
        }
        keys = pump.keys_sent();
    }
    SandboxResult result;
    result.exit_code = wait_for_exit(pid);
    // Counted by the forwarder once the command had ended (kUnreadLinesFd).
    char unread[16] = {};
    if (on_pty && ::read(unread_read.get(), unread, sizeof unread - 1) > 0)
        give_back_unread_lines(io, keys, std::atoi(unread));
    result.cwd = spec_.cwd;
    if (run_watch_) result.program_runs = run_watch_->take();
    if (!traffic.started()) {
        if (auto reason = sandbox_unavailable_reason()) throw SandboxStartError(*reason);
        std::string& held_output = traffic.held_output();
        while (!held_output.empty() && held_output.back() == '\n') held_output.pop_back();
        throw SandboxStartError("the sandbox could not start" +
                                (held_output.empty() ? std::string() : ": " + held_output));
    }
    return result;
}

}  // namespace caretz
