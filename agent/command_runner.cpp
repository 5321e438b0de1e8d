#include "agent/command_runner.h"

#include <algorithm>

#include "sandbox/network/network_proxy.h"

namespace caretz {

CommandRunner::CommandRunner(std::function<SandboxSpec()> spec, bool fresh_per_command,
                             CommandPipeline::Options options, Approver* approver)
    : make_spec_(std::move(spec)),
      fresh_per_command_(fresh_per_command),
      options_(std::move(options)),
      approver_(approver) {}

const SandboxSpec& CommandRunner::spec() {
    if (!spec_) {
        spec_ = make_spec_();
        normal_.spec = *spec_;
        normal_.spec.policy.read_only = false;
        plan_.spec = *spec_;
        plan_.spec.policy.read_only = true;
    }
    return *spec_;
}

CommandRunner::Slot& CommandRunner::open(bool plan_mode) {
    spec();
    Slot& slot = plan_mode ? plan_ : normal_;
    if (!slot.sandbox) {
        slot.sandbox = open_sandbox(slot.spec, fresh_per_command_);
        slot.pipeline = std::make_unique<CommandPipeline>(*slot.sandbox, host_, slot.spec, options_,
                                                          allowances_, approver_);
    }
    return slot;
}

// A sandbox that failed is dropped with its jobs; the next command opens a fresh one.
void CommandRunner::close(bool plan_mode) {
    Slot& slot = plan_mode ? plan_ : normal_;
    slot.pipeline.reset();
    slot.sandbox.reset();
    std::erase_if(jobs_, [&](const auto& entry) { return entry.second.plan_mode == plan_mode; });
}

CommandOutcome CommandRunner::run(const CommandRequest& request, const CommandIo& io) {
    return guarded(request.plan_mode,
                   [&] { return open(request.plan_mode).pipeline->run(request, io); });
}

void CommandRunner::secure_repositories() {
    for (Slot* slot : {&normal_, &plan_})
        if (slot->pipeline) return slot->pipeline->secure_repositories();
}

BackgroundJobs* CommandRunner::jobs_of(bool plan_mode) {
    Slot& slot = plan_mode ? plan_ : normal_;
    return slot.sandbox ? slot.sandbox->background_jobs() : nullptr;
}

int CommandRunner::start_job(const std::string& command, bool plan_mode) {
    if (!has_background_jobs())
        throw SandboxStartError("background jobs need session mode; Caretz runs with --no-session");
    return guarded(plan_mode, [&] {
        int local = open(plan_mode).sandbox->background_jobs()->start(command);
        jobs_[++last_job_id_] = Job{plan_mode, local, command};
        return last_job_id_;
    });
}

std::optional<JobReport> CommandRunner::job_report(int id, bool with_output) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return std::nullopt;
    const Job job = it->second;
    BackgroundJobs* jobs = jobs_of(job.plan_mode);
    if (!jobs) return std::nullopt;
    return guarded(job.plan_mode, [&] {
        return with_output ? jobs->report(job.local_id) : jobs->status(job.local_id);
    });
}

bool CommandRunner::kill_job(int id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return false;
    const Job job = it->second;
    BackgroundJobs* jobs = jobs_of(job.plan_mode);
    return jobs && guarded(job.plan_mode, [&] { return jobs->kill(job.local_id); });
}

std::vector<std::string> CommandRunner::network_allowances() const {
    std::vector<std::string> list;
    for (const Slot* slot : {&normal_, &plan_}) {
        NetworkProxy* proxy = slot->sandbox ? slot->sandbox->network_proxy() : nullptr;
        if (!proxy) continue;
        for (const auto& [host, port] : proxy->session_allowances()) {
            std::string destination = host + ":" + std::to_string(port);
            if (std::find(list.begin(), list.end(), destination) == list.end())
                list.push_back(destination);
        }
    }
    return list;
}

std::vector<std::pair<int, std::string>> CommandRunner::jobs() const {
    std::vector<std::pair<int, std::string>> list;
    for (const auto& [id, job] : jobs_) list.emplace_back(id, job.command);
    return list;
}

}  // namespace caretz
