#include "sandbox/session_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "hooks/shell_launch.h"
#include "pty/pty.h"
#include "sandbox/environment.h"
#include "sandbox/spawn.h"
#include "sandbox/supervisor_protocol.h"

namespace caretz {

namespace {

constexpr const char* kRuntimeDir = "/tmp/.caretz";

int sigchld_pipe[2] = {-1, -1};

void on_sigchld(int) {
    int saved = errno;
    char c = 0;
    [[maybe_unused]] ssize_t n = ::write(sigchld_pipe[1], &c, 1);
    errno = saved;
}

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

// What every fresh shell of this session starts with; set by the first frame.
struct SessionSetup {
    std::string nonce;
    std::string shell;
    std::string home;
};

class Supervisor {
public:
    explicit Supervisor(int control) : control_(control) {}

    int loop() {
        while (true) {
            pollfd fds[3] = {{control_, POLLIN, 0},
                             {pty_ && !master_closed_ ? pty_->master() : -1, POLLIN, 0},
                             {sigchld_pipe[0], POLLIN, 0}};
            if (::poll(fds, 3, -1) < 0) {
                if (errno == EINTR) continue;
                return 1;
            }
            if (fds[2].revents & POLLIN) reap();
            if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) relay_output();
            if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (!reader_.read_from(control_)) return 0;  // Caretz is gone
                while (auto m = reader_.next()) handle(*m);
            }
        }
    }

private:
    void handle(const FrameReader::Message& m) {
        switch (m.type) {
            case Frame::restart: start_shell(m.payload); break;
            case Frame::input:
                if (pty_) write_to_pty(pty_->master(), m.payload);
                break;
            case Frame::run: run(m.payload); break;
            case Frame::resize: resize(m.payload); break;
            default: break;
        }
    }

    // Payload: nonce \0 shell \0 home \0 cwd for the first start, then just the cwd.
    void start_shell(const std::string& payload) {
        std::string cwd = payload;
        if (setup_.nonce.empty()) {
            std::vector<std::string> parts;
            size_t start = 0;
            for (size_t end; (end = payload.find('\0', start)) != std::string::npos; start = end + 1)
                parts.push_back(payload.substr(start, end - start));
            parts.push_back(payload.substr(start));
            if (parts.size() != 4) return;
            setup_ = {parts[0], parts[1], parts[2]};
            cwd = parts[3];
        }
        pty_.emplace(Pty::open(size_));
        ::fcntl(pty_->master(), F_SETFL, ::fcntl(pty_->master(), F_GETFL) | O_NONBLOCK);
        ShellLaunch launch = shell_launch(setup_.shell, std::string(kRuntimeDir) + "/hooks",
                                          setup_.nonce, setup_.home);
        for (const auto& [path, content] : launch.files) {
            ::mkdir(path.substr(0, path.rfind('/')).c_str(), 0700);
            write_file(path, content);
        }
        Environment env = current_environment();
        for (const auto& [k, v] : launch.env) env[k] = v;
        if (!env.count("TERM")) env["TERM"] = "xterm-256color";
        std::vector<std::string> envs = environment_strings(env);
        std::vector<char*> c_env, c_argv;
        for (auto& e : envs) c_env.push_back(e.data());
        c_env.push_back(nullptr);
        for (auto& a : launch.argv) c_argv.push_back(a.data());
        c_argv.push_back(nullptr);

        shell_pid_ = ::fork();
        if (shell_pid_ == 0) {
            reset_signals_for_exec();
            if (!attach_controlling_terminal(pty_->slave())) ::_exit(126);
            if (::chdir(cwd.c_str()) != 0 && ::chdir(setup_.home.c_str()) != 0) ::chdir("/");
            ::execve(c_argv[0], c_argv.data(), c_env.data());
            ::_exit(127);
        }
        pty_->close_slave();
    }

    void run(const std::string& payload) {
        if (!pty_ || payload.empty()) return;
        const bool terminal_stdin = payload[0] == 'T';
        std::string file = std::string(kRuntimeDir) + "/command." + std::to_string(++commands_);
        write_file(file, payload.substr(1) + "\n");
        std::string line = "__caretz_run " + file + (terminal_stdin ? "" : " </dev/null") + "\r";
        write_to_pty(pty_->master(), line);
    }

    void resize(const std::string& payload) {
        auto x = payload.find('x');
        if (x == std::string::npos) return;
        size_.rows = static_cast<unsigned short>(std::atoi(payload.substr(0, x).c_str()));
        size_.cols = static_cast<unsigned short>(std::atoi(payload.substr(x + 1).c_str()));
        if (pty_) set_window_size(pty_->master(), size_);
    }

    void relay_output() {
        char buf[65536];
        ssize_t n = ::read(pty_->master(), buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
        if (n <= 0) {
            // The shell and everything holding its terminal are gone: report once reaped.
            master_closed_ = true;
            report_exit_if_done();
            return;
        }
        send_frame(control_, Frame::output, std::string_view(buf, static_cast<size_t>(n)));
    }

    void reap() {
        char drain[64];
        while (::read(sigchld_pipe[0], drain, sizeof drain) > 0) {
        }
        int status;
        pid_t pid;
        while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
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
        char buf[65536];
        ssize_t n;
        while ((n = ::read(pty_->master(), buf, sizeof buf)) > 0)
            send_frame(control_, Frame::output, std::string_view(buf, static_cast<size_t>(n)));
        pty_.reset();
        master_closed_ = false;
        send_frame(control_, Frame::shell_exited, std::to_string(shell_status_));
    }

    int control_;
    FrameReader reader_;
    SessionSetup setup_;
    std::optional<Pty> pty_;
    WindowSize size_;
    pid_t shell_pid_ = -1;
    int shell_status_ = 0;
    bool master_closed_ = false;
    unsigned commands_ = 0;
};

}  // namespace

int run_session_supervisor() {
    if (::pipe2(sigchld_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return 1;
    struct sigaction sa {};
    sa.sa_handler = on_sigchld;
    sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
    ::sigaction(SIGCHLD, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    ::mkdir(kRuntimeDir, 0700);
    // The control socket must not leak into the shell: a command could forge frames.
    ::fcntl(kSupervisorControlFd, F_SETFD, FD_CLOEXEC);
    Supervisor supervisor(kSupervisorControlFd);
    return supervisor.loop();
}

}  // namespace caretz
