#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "pty/mark_parser.h"
#include "pty/pty.h"
#include "pty/tail_buffer.h"
#include "pty/unique_fd.h"
#include "pty/utmp_record.h"
#include "sandbox/command_pump.h"
#include "sandbox/fresh_sandbox.h"
#include "sandbox/network/network_proxy.h"
#include "sandbox/run_watch.h"
#include "sandbox/sandbox.h"
#include "sandbox/session_phases.h"
#include "sandbox/supervisor_protocol.h"

namespace caretz {

// One long-lived sandbox per Caretz session (session mode): a bwrap running the session
// supervisor, whose shell keeps its state (cwd, variables, functions) between commands, and
// which runs the session's background jobs.
class SandboxSession : public Sandbox, public BackgroundJobs, private PumpTarget {
public:
    // Starts the sandbox and its shell; throws SandboxStartError when bwrap cannot start.
    explicit SandboxSession(const SandboxSpec& spec);
    ~SandboxSession();
    SandboxSession(const SandboxSession&) = delete;
    SandboxSession& operator=(const SandboxSession&) = delete;

    SandboxResult run(const std::string& command, const CommandIo& io) override;
    void resize(WindowSize size) override;
    std::string cwd() const override { return cwd_; }
    BackgroundJobs* background_jobs() override { return this; }
    NetworkProxy* network_proxy() override { return proxy_.get(); }
    std::vector<RepositoryFinding> secure_repositories() override;
    void begin_changes() override;
    std::optional<ChangeList> end_changes() override;
    void exit_follows() override { wait_at_end_ = false; }

    int start(const std::string& command) override;
    std::optional<JobReport> report(int id) override;
    std::optional<JobReport> status(int id) override;
    bool kill(int id) override;

private:
    class Events;

    // Lets the repository watch bind what it protects into this sandbox (pid `inside` is in it).
    void watch_repositories(pid_t inside);
    // Moves traffic until `done` holds; throws SandboxStartError when the sandbox is gone.
    // Returns the keys it sent to the command (CommandPump::keys_sent).
    template <typename Done>
    std::string pump_until(const CommandIo& io, Done done);

    // PumpTarget: the supervisor's control socket and bwrap's error pipe.
    void watch(std::vector<pollfd>& fds) const override;
    bool on_ready(size_t index) override;
    bool command_running() const override { return phases_.command_running(); }
    void send_keys(std::string_view keys) override;
    void send_interrupt(char key) override;
    // Opens the PTY of a fresh shell and has the supervisor start the shell on it.
    void start_shell(const std::string& payload);
    // Sends a job request and waits for the supervisor's answer.
    std::string ask_supervisor(Frame type, const std::string& payload);
    // The error for a session that ended under a command, with the last line bwrap (or the
    // supervisor) wrote on the error pipe, if any.
    std::string unexpected_end();

    // Destroyed last, when bwrap and everything inside are gone (it stops taking connections
    // as soon as the session ends).
    std::unique_ptr<NetworkProxy> proxy_;
    pid_t bwrap_pid_ = -1;
    std::unique_ptr<RunWatch> run_watch_;  // nullptr when no program is watched
    UniqueFd control_;
    UniqueFd errors_;
    TailBuffer bwrap_errors_{4096};  // the last of what was read from errors_
    // bwrap keeps writing its status here after the start; closing it early would kill bwrap
    // with SIGPIPE, so it stays open (unread) for the session's life.
    UniqueFd status_;
    FrameReader reader_;
    std::string nonce_;
    std::unique_ptr<MarkParser> marks_;
    std::string cwd_;
    WindowSize size_;  // the size the session's terminal was given last
    SessionPhases phases_;
    // Whole lines typed during the command that it left unread, as the shell's hook counted.
    int unread_lines_ = 0;
    bool shell_alive_ = false;
    bool wait_at_end_ = true;  // the destructor waits until bwrap is gone
    // A shell was started and has not started its first command yet (for phase_done's marks).
    bool shell_starting_ = false;
    // Set while a pump runs: where the command's output goes.
    const CommandIo* running_io_ = nullptr;
    std::optional<std::string> job_reply_;
    int last_job_id_ = 0;
    std::shared_ptr<RepositoryWatch> repositories_;
    bool spec_read_only_ = false;
    bool exact_output_ = false;  // the session's PTY adds no '\r' before '\n'

    UniqueFd mount_ns_;  // the sandbox's mount namespace, where new protection goes
    // Put in once the first shell or job has been asked for, so that the supervisor gets ready
    // meanwhile; it starts neither before.
    PendingCacheLayer cache_layer_;
    // The shell's PTY in utmp while the shell lives, for a session on a terminal.
    std::optional<UtmpRecord> utmp_;
};

}  // namespace caretz
