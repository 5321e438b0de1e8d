#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "escalation/command_pipeline.h"
#include "escalation/host_probe.h"
#include "escalation/session_allowances.h"
#include "sandbox/sandbox.h"

namespace caretz {

// The sandboxes one Caretz session runs commands in: its own, and for plan mode a read-only
// one. Each opens at its first use, with its own pipeline; both share the session's
// allowances. Background jobs are numbered across both, in the order they started.
class CommandRunner {
public:
    // `spec` gives the session's sandbox, once, when the first command needs it (it may wait
    // for the search for repositories to end). Its read-only flag is ignored, since plan mode
    // picks the sandbox per command.
    CommandRunner(std::function<SandboxSpec()> spec, bool fresh_per_command,
                  CommandPipeline::Options options, Approver* approver);
    CommandRunner(const CommandRunner&) = delete;
    CommandRunner& operator=(const CommandRunner&) = delete;

    // Runs one command through its mode's pipeline. Throws SandboxStartError when the
    // sandbox cannot start or died; the next command then opens a fresh one.
    CommandOutcome run(const CommandRequest& request, const CommandIo& io);

    // False with --no-session: only a session's supervisor outlives a command.
    bool has_background_jobs() const { return !fresh_per_command_; }
    // Starts a background job in the sandbox of the given mode; throws SandboxStartError.
    int start_job(const std::string& command, bool plan_mode);
    // A job's state (and output when `with_output`); nullopt for an id never given out or a
    // job whose sandbox has ended.
    std::optional<JobReport> job_report(int id, bool with_output);
    // Stops a running job; false when it is unknown or has ended.
    bool kill_job(int id);
    // Every job started in sandboxes that are still open: id and command, oldest first.
    std::vector<std::pair<int, std::string>> jobs() const;

    // CommandPipeline::secure_repositories for the open sandboxes (they share one watch).
    void secure_repositories();

    const SessionAllowances& allowances() const { return allowances_; }
    // Destinations (host:port) the user allowed for the session at the network approval, in
    // the sandboxes open now.
    std::vector<std::string> network_allowances() const;
    int columns() { return spec().size.cols; }

private:
    struct Slot {
        SandboxSpec spec;
        std::unique_ptr<Sandbox> sandbox;
        std::unique_ptr<CommandPipeline> pipeline;
    };
    struct Job {
        bool plan_mode;
        int local_id;  // the id its sandbox's supervisor knows it by
        std::string command;
    };

    const SandboxSpec& spec();
    Slot& open(bool plan_mode);
    void close(bool plan_mode);
    // Runs `action` on the mode's sandbox; if the sandbox fails, closes it and rethrows.
    template <typename Action>
    auto guarded(bool plan_mode, Action action) -> decltype(action()) {
        try {
            return action();
        } catch (const SandboxStartError&) {
            close(plan_mode);
            throw;
        }
    }
    BackgroundJobs* jobs_of(bool plan_mode);

    std::function<SandboxSpec()> make_spec_;
    std::optional<SandboxSpec> spec_;  // made at the first need
    bool fresh_per_command_;
    CommandPipeline::Options options_;
    Approver* approver_;
    // Its sandboxes are real, so detection asks the real host about them.
    RealHostProbe host_;
    SessionAllowances allowances_;
    Slot normal_;
    Slot plan_;
    std::map<int, Job> jobs_;
    int last_job_id_ = 0;
};

}  // namespace caretz
