#include "sandbox/session_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hooks/shell_launch.h"
#include "pty/mark_parser.h"
#include "pty/pty.h"
#include "pty/signal_pipe.h"
#include "pty/unique_fd.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/environment.h"
#include "sandbox/layer_gate.h"
#include "sandbox/network/network_forwarder.h"
#include "sandbox/path_names.h"
#include "sandbox/spawn.h"
#include "sandbox/supervisor_protocol.h"

namespace caretz {

namespace {

// Where a command's output goes when Caretz's own output is no terminal (open_output_pipe).
const std::string kOutputPipe = std::string(kRuntimeDir) + "/output";

bool write_file(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::trunc);
    out << content;
    return static_cast<bool>(out);
}

// Typed input is small; if the PTY's input queue stays full for a second (nothing reads it),
// the rest is dropped rather than stalling the output relay.
void write_to_pty(int master, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(master, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            pollfd p{master, POLLOUT, 0};
            if (::poll(&p, 1, 1000) <= 0) return;
            continue;
        }
        if (n <= 0) return;
        data.remove_prefix(static_cast<size_t>(n));
    }
}

// Starts a background job: stdin /dev/null, stdout and stderr to `out_fd`, in `cwd` (else
// home), leading a process group of its own so job_kill reaches what it started.
pid_t spawn_job(const std::vector<std::string>& argv, int out_fd, const std::string& cwd,
                const std::string& home) {
    UniqueFd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    SpawnOptions options;
    options.stdin_fd = null_in.get();
    options.stdout_fd = out_fd;
    options.stderr_fd = out_fd;
    options.cwd = {cwd, home, "/"};
    options.own_process_group = true;
    // The supervisor is the sandbox's first process: its end ends every job anyway.
    options.die_with_parent = false;
    return spawn_process(argv, options);
}

// The session's background jobs: each runs `$SHELL -c COMMAND` in its own process group,
// with no terminal (the supervisor has none), its output going to a file in the private /tmp.
class JobRunner {
public:
    static constexpr size_t kHeadBytes = 16 * 1024;
    static constexpr size_t kTailBytes = 16 * 1024;
    // How long a job may take to end after SIGTERM before it gets SIGKILL.
    static constexpr std::chrono::seconds kKillGrace{2};

    // Payload: id \0 cwd \0 command.
    std::string start(const std::string& payload, const std::string& shell,
                      const std::string& home) {
        auto parts = split_payload(payload);
        if (parts.size() != 3 || shell.empty()) return "error malformed job request";
        std::string path = std::string(kRuntimeDir) + "/job." + parts[0] + ".out";
        UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        if (!out.valid()) return "error cannot create " + path;
        pid_t pid = spawn_job({shell, "-c", parts[2]}, out.get(), parts[1], home);
        if (pid < 0) return "error cannot fork";
        jobs_[std::atoi(parts[0].c_str())] = Job{pid, path, {}, {}};
        return std::string(kJobOk);
    }

    std::string report(const std::string& payload, bool with_output) const {
        auto it = jobs_.find(std::atoi(payload.c_str()));
        if (it == jobs_.end()) return std::string(kJobUnknown);
        JobReport report = it->second.report;
        if (with_output) read_output(it->second.output_path, report);
        return encode_job_report(report);
    }

    std::string kill(const std::string& payload) {
        auto it = jobs_.find(std::atoi(payload.c_str()));
        if (it == jobs_.end()) return std::string(kJobUnknown);
        Job& job = it->second;
        if (job.report.state != JobReport::State::running) return std::string(kJobNotRunning);
        ::kill(-job.pid, SIGTERM);
        job.kill_deadline = std::chrono::steady_clock::now() + kKillGrace;
        return std::string(kJobOk);
    }

    // Records the end of a job; false when `pid` is not one.
    bool reaped(pid_t pid, int wait_status) {
        for (auto& [id, job] : jobs_) {
            if (job.pid != pid || job.report.state != JobReport::State::running) continue;
            if (WIFSIGNALED(wait_status)) {
                job.report.state = JobReport::State::killed;
                job.report.status = WTERMSIG(wait_status);
            } else {
                job.report.state = JobReport::State::exited;
                job.report.status = WEXITSTATUS(wait_status);
            }
            job.kill_deadline.reset();
            return true;
        }
        return false;
    }

    // Milliseconds until the next job that ignored SIGTERM is due its SIGKILL; -1 for none.
    int next_deadline_ms() const {
        int wait = -1;
        auto now = std::chrono::steady_clock::now();
        for (const auto& [id, job] : jobs_) {
            if (!job.kill_deadline) continue;
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(*job.kill_deadline - now);
            int ms = std::max(0, static_cast<int>(left.count()));
            wait = wait < 0 ? ms : std::min(wait, ms);
        }
        return wait;
    }

    void kill_lingering() {
        auto now = std::chrono::steady_clock::now();
        for (auto& [id, job] : jobs_) {
            if (!job.kill_deadline || *job.kill_deadline > now) continue;
            ::kill(-job.pid, SIGKILL);
            job.kill_deadline.reset();
        }
    }

private:
    struct Job {
        pid_t pid;
        std::string output_path;
        JobReport report;
        std::optional<std::chrono::steady_clock::time_point> kill_deadline;
    };

    static void read_output(const std::string& path, JobReport& report) {
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat st {};
        if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return;
        auto size = static_cast<uint64_t>(st.st_size);
        report.output_bytes = size;
        report.output_head = read_at(fd.get(), 0, std::min<uint64_t>(size, kHeadBytes));
        if (size > kHeadBytes) {
            uint64_t tail = std::min<uint64_t>(size - kHeadBytes, kTailBytes);
            report.output_tail = read_at(fd.get(), size - tail, tail);
        }
    }

    static std::string read_at(int fd, uint64_t offset, uint64_t length) {
        std::string data(length, '\0');
        ssize_t n = ::pread(fd, data.data(), length, static_cast<off_t>(offset));
        data.resize(n > 0 ? static_cast<size_t>(n) : 0);
        return data;
    }

    std::map<int, Job> jobs_;
};

// What every fresh shell of this session starts with; set by the first frame.
struct SessionSetup {
    std::string nonce;
    std::string shell;
    std::string home;
    bool exact_output = false;  // Caretz's output is no terminal: no '\r' added to '\n'
};

// A child process stopped (SIGSTOP) for as long as this lives, then continued.
class StoppedProcess {
public:
    explicit StoppedProcess(pid_t pid) {
        if (pid <= 0 || ::kill(pid, SIGSTOP) != 0) return;
        pid_ = pid;
        // Stopped once it says so; an end it met instead stays for reap() to collect.
        siginfo_t info{};
        while (::waitid(P_PID, pid, &info, WSTOPPED | WEXITED | WNOWAIT) != 0 && errno == EINTR) {
        }
        if (info.si_code != CLD_STOPPED) return;
        // Taken, so that the next stop is waited for afresh.
        siginfo_t taken{};
        ::waitid(P_PID, pid, &taken, WSTOPPED | WNOHANG);
        stopped_ = true;
    }
    ~StoppedProcess() {
        if (pid_ > 0) ::kill(pid_, SIGCONT);
    }
    StoppedProcess(const StoppedProcess&) = delete;
    StoppedProcess& operator=(const StoppedProcess&) = delete;
    bool stopped() const { return stopped_; }

private:
    pid_t pid_ = -1;
    bool stopped_ = false;
};

// A command nobody types into, followed through the shell's marks: while it runs, a program
// that reads its terminal is offered the end of input, at most once a tick, so a command that
// prints a lot does not pay for it on every read. The first offer comes a tick after the
// start: a command that ends sooner (most do) never has its shell stopped for one.
class UnattendedCommand : public MarkParser::Handler {
public:
    static constexpr std::chrono::milliseconds kTick{50};

    explicit UnattendedCommand(const std::string& nonce) : marks_(nonce) {}

    void follow(std::string_view bytes) { marks_.feed(bytes, *this); }
    bool done() const { return done_; }
    // Milliseconds until the next offer is due; -1 while the command does not run.
    int ms_until_offer() const {
        if (!started_ || done_) return -1;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            next_offer_ - std::chrono::steady_clock::now());
        return std::max(0, static_cast<int>(left.count()));
    }
    // Offers the end of input if it is due, with the session shell `shell` stopped meanwhile.
    // The offer goes only to a terminal in canonical mode; a shell back at its prompt reads it
    // raw, and would take the end-of-input character for the user's Ctrl-D and end. Stopped, the
    // shell cannot switch its terminal between the look at the mode and the offer.
    void offer_if_due(Pty& pty, pid_t shell) {
        if (ms_until_offer() != 0) return;
        next_offer_ = std::chrono::steady_clock::now() + kTick;
        if (StoppedProcess held(shell); held.stopped()) pty.offer_end_of_input();
    }

    void on_output(std::string_view) override {}
    void on_command_start() override {
        started_ = true;
        next_offer_ = std::chrono::steady_clock::now() + kTick;
    }
    void on_command_done(int) override { done_ = true; }

private:
    MarkParser marks_;
    bool started_ = false;
    bool done_ = false;
    std::chrono::steady_clock::time_point next_offer_{};
};

class Supervisor {
public:
    Supervisor(int control, int sigchld_fd, UniqueFd forwarder_listener, LayerGate& layer_gate)
        : control_(control),
          sigchld_fd_(sigchld_fd),
          forwarder_listener_(std::move(forwarder_listener)),
          layer_gate_(layer_gate) {}

    int loop() {
        while (true) {
            pollfd fds[4] = {{control_, POLLIN, 0},
                             {pty_ && !master_closed_ ? pty_->master() : -1, POLLIN, 0},
                             {sigchld_fd_, POLLIN, 0},
                             {output_read_.get(), POLLIN, 0}};
            int timeout = jobs_.next_deadline_ms();
            if (int offer = unattended_ ? unattended_->ms_until_offer() : -1; offer >= 0)
                timeout = timeout < 0 ? offer : std::min(timeout, offer);
            if (::poll(fds, 4, timeout) < 0) {
                if (errno == EINTR) continue;
                return 1;
            }
            jobs_.kill_lingering();
            if (unattended_ && pty_) unattended_->offer_if_due(*pty_, shell_pid_);
            if (fds[3].revents & POLLIN) relay_command_output();
            if (fds[2].revents & POLLIN) reap();
            // Reaping may have reported the shell's end and dropped its PTY: the readiness
            // seen for the old master must not be applied to whatever comes next.
            if (pty_ && fds[1].fd == pty_->master() &&
                (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
                relay_output();
            if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (!reader_.read_with_fds_from(control_)) return 0;  // Caretz is gone
                while (auto m = reader_.next()) handle(*m);
            }
        }
    }

private:
    void handle(const FrameReader::Message& m) {
        switch (m.type) {
            case Frame::setup:
                set_up(m.payload);
                break;
            case Frame::start_shell:
                start_shell(m.payload);
                break;
            case Frame::input:
                if (pty_) write_to_pty(pty_->master(), m.payload);
                break;
            case Frame::run:
                run(m.payload);
                break;
            case Frame::resize:
                resize(m.payload);
                break;
            case Frame::job_start:
                through_layer_gate();
                reply(jobs_.start(m.payload, setup_.shell, setup_.home));
                break;
            case Frame::job_output:
                reply(jobs_.report(m.payload, true));
                break;
            case Frame::job_status:
                reply(jobs_.report(m.payload, false));
                break;
            case Frame::job_kill:
                reply(jobs_.kill(m.payload));
                break;
            default:
                break;
        }
    }

    void reply(const std::string& payload) { send_frame(control_, Frame::job_reply, payload); }

    // Before the first shell or job: the cache layer is in place, or the sandbox ends here,
    // running nothing (Caretz says why).
    void through_layer_gate() {
        if (!layer_gate_.passed()) ::_exit(126);
    }

    // Payload: nonce \0 shell \0 home \0 output ("exact" or "terminal"); taken once.
    void set_up(const std::string& payload) {
        std::vector<std::string> parts = split_payload(payload);
        if (!setup_.nonce.empty() || parts.size() != 4 || !is_plain_nonce(parts[0])) return;
        setup_ = {parts[0], parts[1], parts[2], parts[3] == "exact"};
    }

    // Payload: cwd \0 then the first command, as Frame::run's payload. The shell's hook runs it
    // once the user's rc is read, as if it were typed at the first prompt: no prompt drawn, no
    // line read, and no round trip to Caretz before it starts.
    void start_shell(const std::string& payload) {
        const size_t split = payload.find('\0');
        if (setup_.nonce.empty() || split == std::string::npos || split + 1 == payload.size())
            return;
        const std::string cwd = payload.substr(0, split);
        const std::string command = payload.substr(split + 1);
        // The PTY came with the frame, opened on the host, where Caretz records it in utmp.
        // Without it no shell can start; ending here ends the sandbox, which Caretz reports.
        std::vector<UniqueFd> pty_ends = reader_.take_fds();
        if (pty_ends.size() != 2) ::_exit(1);
        pty_.emplace(Pty::adopt(std::move(pty_ends[0]), std::move(pty_ends[1])));
        if (setup_.exact_output && !output_read_.valid()) open_output_pipe();
        master_closed_ = false;
        ::fcntl(pty_->master(), F_SETFL, ::fcntl(pty_->master(), F_GETFL) | O_NONBLOCK);
        // The hook files are already in place, read-only: Caretz put them in when it started
        // the sandbox (session_hook_files), so no command can change what a new shell runs.
        ShellLaunch launch = shell_launch(setup_.shell, kHookDir, setup_.home);
        // Without the nonce no shell can start; ending here ends the sandbox, which Caretz
        // reports, rather than leaving it waiting for a prompt that never comes.
        int nonce_pipe[2];
        if (::pipe2(nonce_pipe, O_CLOEXEC) != 0) ::_exit(1);
        UniqueFd nonce_read(nonce_pipe[0]);
        {
            UniqueFd nonce_write(nonce_pipe[1]);
            const std::string line = setup_.nonce + "\n";  // far less than a pipe holds
            if (::write(nonce_write.get(), line.data(), line.size()) !=
                static_cast<ssize_t>(line.size()))
                ::_exit(1);
        }
        Environment env = environment_for(launch, current_environment());
        if (!env.count("TERM")) env["TERM"] = "xterm-256color";
        // For the hooks: a shell that resets the terminal's output modes (fish) sets them again.
        if (setup_.exact_output) env["CARETZ_EXACT_OUTPUT"] = "1";
        // For the hooks: where a command's output goes instead of the terminal.
        if (output_read_.valid()) env["CARETZ_OUTPUT_PIPE"] = kOutputPipe;
        // For the hooks: the first command, and whether it reads the terminal.
        const bool terminal_stdin = command[0] == 'T';
        env["CARETZ_FIRST_COMMAND"] = prepare_command(command);
        env["CARETZ_FIRST_COMMAND_INPUT"] = terminal_stdin ? "terminal" : "none";
        through_layer_gate();
        SpawnOptions options;
        options.controlling_terminal = pty_->slave();
        options.fds = {{nonce_read.get(), kNonceFd}};
        options.env = env;
        options.cwd = {cwd, setup_.home, "/"};
        options.die_with_parent = false;  // the sandbox ends with its first process anyway
        shell_pid_ = spawn_process(launch.argv, options);
        pty_->close_slave();
        if (shell_pid_ > 0) send_frame(control_, Frame::shell_started, {});
        // The forwarder's fork is off the first shell's path to its prompt.
        if (forwarder_listener_.valid()) start_network_forwarder(std::move(forwarder_listener_));
    }

    // Makes ready to run a command (a run payload): how its output and its reads of the
    // terminal are followed, and the file the shell sources it from, whose path it returns.
    std::string prepare_command(const std::string& payload) {
        // Nobody types into this command: once it runs, a program that reads its terminal
        // gets the end of input instead of waiting for keys that never come.
        if (payload[0] == 'T') {
            unattended_.reset();
        } else {
            unattended_.emplace(setup_.nonce);
        }
        std::string file = join_path(kRuntimeDir, "command." + std::to_string(++commands_));
        write_file(file, payload.substr(1) + "\n");
        if (output_read_.valid()) awaiting_start_ = true;
        return file;
    }

    void run(const std::string& payload) {
        if (!pty_ || payload.empty()) return;
        const std::string file = prepare_command(payload);
        // Ctrl-U first: it erases whatever the user typed ahead without Enter, which the shell
        // holds as the start of its next line (kill-line in readline, zsh and fish alike).
        write_to_pty(pty_->master(),
                     "\x15__caretz_run " + file + (payload[0] == 'T' ? "" : " </dev/null") + "\r");
    }

    // When Caretz's own output is no terminal (a pipe, a file), neither is a command's, as in
    // a shell whose output is redirected: no pager starts and waits for keys, nothing colours
    // its output for a screen. The hooks send the command's output (not their marks) to this
    // named pipe (CARETZ_OUTPUT_PIPE). The supervisor holds a write end too, so that the read
    // end reports no hang-up between commands.
    void open_output_pipe() {
        if (::mkfifo(kOutputPipe.c_str(), 0600) != 0 && errno != EEXIST) return;
        output_read_.reset(::open(kOutputPipe.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        output_hold_.reset(::open(kOutputPipe.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
        if (!output_hold_.valid()) output_read_.reset();
        start_mark_ = command_start_mark(setup_.nonce);
    }

    // What the command wrote to the output pipe so far. It goes on in the order the shell
    // wrote: after the start mark, which the terminal may bring later than the pipe brings
    // the output (it is held until then), and before whatever the terminal brings next (the
    // end mark and the prompt, written once the command had written all of it).
    void relay_command_output() {
        if (!output_read_.valid()) return;
        char buf[kBatch];
        while (true) {
            ssize_t n = ::read(output_read_.get(), buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;
            if (awaiting_start_) {
                early_output_.append(buf, static_cast<size_t>(n));
            } else {
                forward(std::string_view(buf, static_cast<size_t>(n)));
            }
        }
    }

    // Bytes from the shell's terminal, in exact-output mode: up to the command's start mark,
    // then what the command wrote before it showed, then the rest. A tail that may be the
    // start of the mark waits for the next read.
    void relay_terminal_output(std::string_view bytes) {
        if (!awaiting_start_) {
            forward(bytes);
            return;
        }
        carried_.append(bytes);
        if (auto at = carried_.find(start_mark_); at != std::string::npos) {
            const size_t end = at + start_mark_.size();
            forward(std::string_view(carried_).substr(0, end));
            awaiting_start_ = false;
            std::string rest = carried_.substr(end);
            carried_.clear();
            if (!early_output_.empty()) forward(std::exchange(early_output_, {}));
            relay_command_output();
            if (!rest.empty()) forward(rest);
            return;
        }
        size_t keep = std::min(carried_.size(), start_mark_.size() - 1);
        while (keep > 0 &&
               carried_.compare(carried_.size() - keep, keep, start_mark_, 0, keep) != 0)
            --keep;
        forward(std::string_view(carried_).substr(0, carried_.size() - keep));
        carried_.erase(0, carried_.size() - keep);
    }

    // Everything held back, in order, once the shell is gone.
    void release_held_output() {
        awaiting_start_ = false;
        if (!carried_.empty()) forward(std::exchange(carried_, {}));
        if (!early_output_.empty()) forward(std::exchange(early_output_, {}));
        relay_command_output();
    }

    void forward(std::string_view bytes) {
        follow_command(bytes);
        send_frame(control_, Frame::output, bytes);
    }

    void resize(const std::string& payload) {
        auto x = payload.find('x');
        if (x == std::string::npos) return;
        size_.rows = static_cast<unsigned short>(std::atoi(payload.substr(0, x).c_str()));
        size_.cols = static_cast<unsigned short>(std::atoi(payload.substr(x + 1).c_str()));
        if (pty_) set_window_size(pty_->master(), size_);
    }

    static constexpr size_t kBatch = 65536;

    // What the shell's terminal holds, up to kBatch bytes into `buf`. The line discipline hands
    // over at most 4 KiB a read; what arrived meanwhile goes along in the same frame, so a flood
    // of output costs Caretz fewer wakeups and writes. `closed`: the terminal's other side is
    // gone, with everything that held it.
    std::string_view read_batch(char* buf, bool& closed) {
        size_t got = 0;
        while (kBatch - got >= 4096) {
            ssize_t n = ::read(pty_->master(), buf + got, kBatch - got);
            if (n > 0) {
                got += static_cast<size_t>(n);
                continue;
            }
            closed = !(n < 0 && (errno == EINTR || errno == EAGAIN));
            break;
        }
        return {buf, got};
    }

    void relay_output() {
        char buf[kBatch];
        bool closed = false;
        std::string_view bytes = read_batch(buf, closed);
        // The pipe is read after the terminal: what the command wrote before the shell wrote
        // these bytes (its end mark among them) is in the pipe by now, and goes first. Read
        // the other way round, output written between the two reads came after the end mark.
        relay_command_output();
        if (!bytes.empty()) relay_terminal_output(bytes);
        if (closed) {
            // The shell and everything holding its terminal are gone: report once reaped.
            master_closed_ = true;
            report_exit_if_done();
        }
    }

    // Once an unattended command is done, an end of input that nobody read is dropped, so it
    // cannot reach the shell's prompt.
    void follow_command(std::string_view bytes) {
        if (!unattended_) return;
        unattended_->follow(bytes);
        if (!unattended_->done()) return;
        pty_->drop_pending_input();
        unattended_.reset();
    }

    void reap() {
        drain_signal_pipe(sigchld_fd_);
        int status;
        pid_t pid;
        while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
            if (jobs_.reaped(pid, status)) continue;
            if (pid == shell_pid_) {
                shell_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                shell_pid_ = -1;
                report_exit_if_done();
            }
        }
    }

    // The shell's last output must reach Caretz before the news that it ended.
    void report_exit_if_done() {
        if (shell_pid_ != -1 || !pty_) return;
        char buf[kBatch];
        bool closed = false;
        for (std::string_view bytes; !(bytes = read_batch(buf, closed)).empty();) {
            relay_command_output();  // after the terminal's bytes, as in relay_output
            relay_terminal_output(bytes);
        }
        release_held_output();
        unattended_.reset();
        pty_.reset();
        master_closed_ = false;
        send_frame(control_, Frame::shell_exited, std::to_string(shell_status_));
    }

    int control_;
    int sigchld_fd_;
    UniqueFd forwarder_listener_;  // until the forwarder starts with it
    LayerGate& layer_gate_;
    FrameReader reader_;
    SessionSetup setup_;
    JobRunner jobs_;
    std::optional<Pty> pty_;
    std::optional<UnattendedCommand> unattended_;  // the command sent last, if nobody types into it
    // Exact-output mode (open_output_pipe): the pipe, the command's start mark, whether the
    // command sent last has yet to show it, and what waits for it.
    UniqueFd output_read_, output_hold_;
    std::string start_mark_;
    bool awaiting_start_ = false;
    std::string carried_, early_output_;
    WindowSize size_;
    pid_t shell_pid_ = -1;
    int shell_status_ = 0;
    bool master_closed_ = false;
    unsigned commands_ = 0;
};

}  // namespace

int run_session_supervisor() {
    // First, so that Caretz puts the cache layer in while the supervisor gets ready.
    LayerGate layer_gate;
    // The supervisor learns the session nonce; the commands of the sandbox run as the same user
    // and must not read it from this process's memory or trace it (the shell has its guard).
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    // Whatever else bwrap handed down (its status pipe, the binary) is not the shell's.
    static_assert(kLayerGateFd > kSupervisorControlFd + 1);
    ::close_range(kSupervisorControlFd + 1, kLayerGateFd - 1, 0);
    ::close_range(kLayerGateFd + 1, ~0U, 0);
    // Listening before the first shell starts, so its first command finds the proxy; the
    // forwarder that relays those connections starts once the shell has (its end is reaped
    // like any unknown child's).
    UniqueFd forwarder_listener = listen_for_forwarder();
    int sigchld_fd = signal_pipe(SIGCHLD, SA_NOCLDSTOP | SA_RESTART);
    if (sigchld_fd < 0) return 1;
    ::signal(SIGPIPE, SIG_IGN);
    ::mkdir(kRuntimeDir, 0700);
    // The control socket must not leak into the shell: a command could forge frames.
    ::fcntl(kSupervisorControlFd, F_SETFD, FD_CLOEXEC);

    Supervisor supervisor(kSupervisorControlFd, sigchld_fd, std::move(forwarder_listener),
                          layer_gate);
    return supervisor.loop();
}

}  // namespace caretz
