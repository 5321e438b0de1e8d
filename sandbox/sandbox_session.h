#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "pty/mark_parser.h"
#include "pty/pty.h"
#include "pty/unique_fd.h"
#include "sandbox/network_proxy.h"
#include "sandbox/sandbox.h"
#include "sandbox/supervisor_protocol.h"

namespace caretz {

// One long-lived sandbox per Caretz session (session mode): a bwrap running the session
// supervisor, whose shell keeps its state (cwd, variables, functions) between commands, and
// which runs the session's background jobs.
class SandboxSession : public Sandbox, public BackgroundJobs {
public:
    // Starts the sandbox and its shell; throws SandboxStartError when bwrap cannot start.
    SandboxSession(const SandboxPolicy& policy, const Environment& env, const std::string& shell,
                   const std::string& cwd, WindowSize size);
    ~SandboxSession();
    SandboxSession(const SandboxSession&) = delete;
    SandboxSession& operator=(const SandboxSession&) = delete;

    SandboxResult run(const std::string& command, const CommandIo& io) override;
    void resize(WindowSize size) override;
    std::string cwd() const override { return cwd_; }
    BackgroundJobs* background_jobs() override { return this; }
    NetworkProxy* network_proxy() override { return proxy_.get(); }

    int start(const std::string& command) override;
    std::optional<JobReport> report(int id) override;
    std::optional<JobReport> status(int id) override;
    bool kill(int id) override;

private:
    class Events;
    enum class Phase { starting, idle, sent, running, finishing };

    void wait_until_ready(const CommandIo& io, SandboxResult& result);
    bool pump(const CommandIo& io, SandboxResult& result);
    void forward_input(const CommandIo& io);
    void restart_shell();
    // Sends a job request and waits for the supervisor's answer.
    std::string ask_supervisor(Frame type, const std::string& payload);

    // Destroyed last, when bwrap and everything inside are gone, so closing the proxy cuts
    // no command's connection short.
    std::unique_ptr<NetworkProxy> proxy_;
    pid_t bwrap_pid_ = -1;
    UniqueFd control_;
    UniqueFd errors_;
    // bwrap keeps writing its status here after the start; closing it early would kill bwrap
    // with SIGPIPE, so it stays open (unread) for the session's life.
    UniqueFd status_;
    FrameReader reader_;
    std::string nonce_;
    std::unique_ptr<MarkParser> marks_;
    std::string cwd_;
    Phase phase_ = Phase::starting;
    bool shell_alive_ = false;
    bool input_closed_ = false;
    // A Ctrl-C (or Ctrl-\) for a model's command, pressed again each second until it ends.
    std::string interrupt_keys_;
    InterruptRepeat interrupt_repeat_;
    std::optional<std::string> job_reply_;
    int last_job_id_ = 0;
};

}  // namespace caretz
