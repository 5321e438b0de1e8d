#include "escalation/command_pipeline.h"

#include <unistd.h>

#include <cstdio>

#include "escalation/host_rerun.h"
#include "escalation/offer.h"
#include "escalation/output_lines.h"
#include "escalation/refusal_detector.h"
#include "pty/output_capture.h"

namespace caretz {

namespace {

std::string_view source_name(CommandSource s) {
    switch (s) {
        case CommandSource::user:
            return "user";
        case CommandSource::model:
            return "model";
        case CommandSource::subagent:
            return "subagent";
        case CommandSource::background:
            return "background";
    }
    return "user";
}

}  // namespace

std::string refusal_notice(const std::vector<Refusal>& refusals, const std::string& why) {
    std::string text = "caretz: the sandbox refused";
    for (size_t i = 0; i < refusals.size(); ++i)
        text += std::string(i ? ";" : "") + " " + std::string(to_string(refusals[i].kind)) + " " +
                shown_escaped(refusals[i].subject);
    return text + "; nobody was asked (" + why + "), so the sandboxed result stands\n";
}

CommandPipeline::CommandPipeline(Sandbox& sandbox, const HostProbe& host, const SandboxSpec& spec,
                                 Options options, SessionAllowances& allowances, Approver* approver)
    : sandbox_(sandbox),
      host_(host),
      spec_(spec),
      options_(std::move(options)),
      allowances_(allowances),
      approver_(approver),
      audit_(options_.audit_path, options_.audit_syslog) {
    if (NetworkProxy* proxy = sandbox_.network_proxy()) proxy->set_approval(&network_answers_);
}

CommandPipeline::~CommandPipeline() {
    if (NetworkProxy* proxy = sandbox_.network_proxy()) proxy->set_approval(nullptr);
}

NetworkDecision CommandPipeline::NetworkAnswers::ask(const std::string& host, uint16_t port) {
    if (!pipeline_.approver_) return NetworkDecision::nobody_to_ask;
    switch (pipeline_.approver_->ask_network({host, port})) {
        case Decision::allow_once:
            return NetworkDecision::allow_once;
        case Decision::allow_session:
            return NetworkDecision::allow_session;
        case Decision::timeout:
            return NetworkDecision::timeout;
        default:
            return NetworkDecision::deny;
    }
}

bool CommandPipeline::NetworkAnswers::record(const std::string& host, uint16_t port,
                                             NetworkDecision decision) {
    if (pipeline_.audit_.append_network(pipeline_.options_.session_id, host, port,
                                        to_string(decision)))
        return true;
    std::fprintf(stderr, "caretz: cannot write the audit log %s, so %s:%u stays blocked\n",
                 pipeline_.audit_.path().c_str(), shown_escaped(host).c_str(), port);
    return false;
}

std::string CommandPipeline::why_nobody_is_asked(const CommandRequest& request) const {
    if (!options_.ask_sandbox_off) return "--ask-sandbox-off is not set";
    if (request.plan_mode) return "plan mode never runs commands outside the sandbox";
    if (request.source == CommandSource::subagent) return "subagents never ask";
    if (request.source == CommandSource::background) return "background commands never ask";
    if (!approver_) return "there is no terminal to ask on";
    return "";
}

CommandOutcome CommandPipeline::run(const CommandRequest& request, const CommandIo& io) {
    if (allowances_.covers(request.command) && why_nobody_is_asked(request).empty()) {
        AuditEntry entry{options_.session_id,
                         std::string(source_name(request.source)),
                         request.command,
                         sandbox_.cwd(),
                         {},
                         Decision::session_allowance,
                         std::nullopt};
        if (audit_written(entry)) return run_on_host(request, entry);
    }

    OutputCapture capture(spec_.size.cols);
    RefusalDetector detector;
    OutputLines lines([&](std::string_view line) { detector.observe_line(line); });
    CommandIo sandbox_io = io;
    // Like the offer, the network approval is for commands the user is watching.
    sandbox_io.may_ask_network = approver_ && (request.source == CommandSource::user ||
                                               request.source == CommandSource::model);
    sandbox_io.on_output = [&](std::string_view bytes) {
        if (io.on_output) io.on_output(bytes);
        capture.append(bytes);
        lines.feed(bytes);
    };
    // Recorded for whoever decides: the user, or the audit log when nobody can be asked.
    const bool record = options_.ask_sandbox_off;
    if (record) sandbox_.begin_changes();
    SandboxResult result = sandbox_.run(request.command, sandbox_io);
    lines.finish();
    secure_repositories();

    CommandOutcome outcome;
    if (record) outcome.changed = sandbox_.end_changes();
    outcome.exit_code = result.exit_code;
    outcome.cwd = result.cwd;
    outcome.shell_exited = result.shell_exited;
    outcome.output = capture.text();

    auto docker_host = spec_.env.find("DOCKER_HOST");
    DetectionContext ctx{.command = request.command,
                         .exit_code = result.exit_code,
                         .cwd = result.cwd,
                         .policy = spec_.policy,
                         .host = host_,
                         .docker_host = docker_host == spec_.env.end() ? "" : docker_host->second,
                         .program_runs = std::move(result.program_runs),
                         .env = spec_.env};
    outcome.refusals = detector.finish(ctx);
    if (outcome.refusals.empty()) return outcome;

    AuditEntry entry{options_.session_id, std::string(source_name(request.source)),
                     request.command,     result.cwd,
                     outcome.refusals,    Decision::deny,
                     outcome.changed};
    std::string why = why_nobody_is_asked(request);
    if (!why.empty()) {
        std::fputs(refusal_notice(outcome.refusals, why).c_str(), stderr);
        if (options_.ask_sandbox_off) {
            entry.decision = Decision::nobody_to_ask;
            audit_.append(entry);
            outcome.decision = Decision::nobody_to_ask;
        }
        return outcome;
    }

    // A standing rule answers as the user would have; the offer is not shown.
    Decision decision =
        options_.always_allow.count(request.command)
            ? Decision::config_allowance
            : approver_->ask_sandbox_off({request.command, result.cwd, outcome.refusals,
                                          outcome.changed, spec_.policy.workspace});
    entry.decision = decision;
    if (!audit_written(entry)) decision = Decision::deny;
    outcome.decision = decision;
    if (!runs_on_host(decision)) return outcome;
    return run_on_host(request, entry);
}

void CommandPipeline::secure_repositories() {
    for (const auto& finding : sandbox_.secure_repositories()) {
        std::fputs((shown_escaped(describe(finding)) + "\n").c_str(), stderr);
        audit_.append_repository(options_.session_id, to_string(finding.kind), finding.path,
                                 finding.detail, finding.aside);
    }
}

bool CommandPipeline::audit_written(const AuditEntry& entry) const {
    if (audit_.append(entry)) return true;
    std::fprintf(stderr,
                 "caretz: cannot write the audit log %s, so nothing runs outside the sandbox\n",
                 audit_.path().c_str());
    return false;
}

CommandOutcome CommandPipeline::run_on_host(const CommandRequest& request,
                                            const AuditEntry& entry) {
    if (entry.decision == Decision::allow_session) allowances_.allow(request.command);
    // Background jobs may have made a repository while the user was asked.
    secure_repositories();
    CommandOutcome outcome;
    outcome.cwd = entry.cwd;
    outcome.refusals = entry.refusals;
    outcome.decision = entry.decision;
    outcome.ran_on_host = true;

    OutputCapture capture(spec_.size.cols);
    RerunCommand rerun{options_.shell, request.command, entry.cwd, spec_.env};
    // Only the user can approve (why_nobody_is_asked), so there is an approver here.
    outcome.exit_code =
        approver_->rerun(rerun, [&](std::string_view bytes) { capture.append(bytes); });
    outcome.output = capture.text();
    audit_.append_rerun_exit(entry, outcome.exit_code);
    return outcome;
}

}  // namespace caretz
