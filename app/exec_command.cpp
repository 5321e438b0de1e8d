#include "app/exec_command.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/sandbox_spec.h"
#include "escalation/command_pipeline.h"
#include "escalation/host_probe.h"
#include "escalation/terminal_approver.h"
#include "pty/fd_io.h"
#include "sandbox/phase_times.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

std::string outcome_json(const CommandOutcome& outcome) {
    nlohmann::json refusals = nlohmann::json::array();
    for (const auto& r : outcome.refusals) {
        nlohmann::json refusal = {
            {"kind", to_string(r.kind)}, {"subject", r.subject}, {"evidence", r.evidence}};
        if (!r.origin.empty()) refusal["origin"] = r.origin;
        refusals.push_back(std::move(refusal));
    }
    nlohmann::json out = {
        {"exit_code", outcome.exit_code},
        {"output", outcome.output},
        {"cwd", outcome.cwd},
        {"ran", outcome.ran_on_host ? "host" : "sandbox"},
        {"refusals", refusals},
        {"decision",
         outcome.decision ? nlohmann::json(to_string(*outcome.decision)) : nlohmann::json(nullptr)},
        {"changed", nullptr}};
    if (outcome.changed) {
        nlohmann::json paths = nlohmann::json::array();
        for (const auto& c : outcome.changed->kept) {
            nlohmann::json change = {{"change", to_string(c.kind)}, {"path", c.path}};
            if (!c.from.empty()) change["from"] = c.from;
            if (c.folder) change["folder"] = true;
            paths.push_back(std::move(change));
        }
        out["changed"] = {{"count", outcome.changed->count}, {"paths", std::move(paths)}};
        if (!outcome.changed->incomplete.empty())
            out["changed"]["incomplete"] = outcome.changed->incomplete;
    }
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

CommandPipeline::Options pipeline_options(const Settings& settings, const UserContext& user) {
    CommandPipeline::Options options;
    options.ask_sandbox_off = settings.ask_sandbox_off;
    options.always_allow = {settings.always_allow.begin(), settings.always_allow.end()};
    options.session_id = random_hex(8);
    options.shell = user.shell;
    options.audit_path = AuditLog::default_path(user.home);
    options.audit_syslog = settings.audit_syslog;
    return options;
}

int run_exec(const CommandLine& cl, const Settings& settings) {
    UserContext user = current_user_context();
    SandboxSpec spec = sandbox_spec_for(cl, settings, user);
    // With a terminal the command reads the user's keys and follows the window; without one
    // (a pipe, a file, CI) it gets the end of input at once and its output byte for byte.
    std::unique_ptr<Terminal> terminal = cl.print ? nullptr : Terminal::open_standard();
    CommandIo io;
    io.terminal = terminal.get();
    io.stdin_from_terminal = terminal != nullptr;
    if (!cl.json) io.on_output = [](std::string_view bytes) { write_all(STDOUT_FILENO, bytes); };
    io.output_to_terminal = io.on_output && terminal;

    CommandOutcome outcome;
    try {
        auto sandbox = open_sandbox(spec, cl.no_session);
        SessionAllowances allowances;
        std::optional<TerminalApprover> approver;
        if (terminal) approver.emplace(*terminal, settings.permission_timeout, settings.notice);
        RealHostProbe host;
        CommandPipeline pipeline(*sandbox, host, spec, pipeline_options(settings, user), allowances,
                                 approver ? &*approver : nullptr);
        phase_done("sandbox setup");
        outcome = pipeline.run(CommandRequest{cl.command, CommandSource::user, cl.plan}, io);
        sandbox->exit_follows();
        if (spec.repositories) spec.repositories->exit_follows();
        phase_done("command");
    } catch (const SandboxStartError& e) {
        terminal.reset();
        std::fprintf(stderr, "caretz: %s\n", e.what());
        return 125;
    }
    terminal.reset();
    if (cl.json) write_all(STDOUT_FILENO, outcome_json(outcome));
    phase_done("end");
    return outcome.exit_code;
}

}  // namespace caretz
