#include "agent/tool_runner.h"

#include <chrono>
#include <thread>

#include "agent/tool_result.h"
#include "agent/tools.h"
#include "escalation/offer.h"

namespace caretz {

namespace {

// How long job_kill waits for the job to end, so its result can say how it ended.
constexpr auto kKillWait = std::chrono::seconds(3);

ToolOutcome error_outcome(const std::string& error) {
    ToolOutcome out;
    out.content = "error: " + error;
    out.record = {{"ran", "none"}, {"error", error}};
    return out;
}

}  // namespace

ToolOutcome ToolRunner::run(const ToolCall& call, bool plan_mode, TurnInterrupt& interrupt) {
    ParsedToolCall parsed = parse_tool_call(call, static_cast<bool>(run_subagent_));
    if (!parsed.error.empty()) {
        view_.notice("the model's " + call.name + " call was not run: " + parsed.error);
        return error_outcome(parsed.error + "; nothing ran");
    }
    if (call.name == "shell") {
        return parsed.background ? start_job(parsed.command, plan_mode)
                                 : run_shell(parsed.command, plan_mode, interrupt);
    }
    if (call.name == "job_output") return job_output(parsed.job_id);
    if (call.name == "job_kill") return job_kill(parsed.job_id);
    view_.activity("task: " + shown_escaped(parsed.prompt.substr(0, 200)));
    return run_subagent_(parsed.prompt);
}

ToolOutcome ToolRunner::run_shell(const std::string& command, bool plan_mode,
                                  TurnInterrupt& interrupt) {
    view_.command_started(command, false);
    CommandIo io;
    io.terminal = services_.terminal;
    io.stdin_from_terminal = false;
    io.on_output = [this](std::string_view bytes) { view_.command_output(bytes); };
    io.output_to_terminal = io.terminal && view_.output_fd() == io.terminal->output_fd();
    io.on_interrupt_key = [&interrupt] { interrupt.request(); };
    CommandOutcome outcome;
    try {
        outcome = services_.commands.run(CommandRequest{command, source_, plan_mode}, io);
    } catch (const SandboxStartError& e) {
        view_.command_failed(e.what());
        return error_outcome(std::string("the sandbox could not run the command: ") + e.what());
    }
    ToolOutcome out;
    out.interrupted = interrupt.requested();
    out.content = command_result_text(outcome, out.interrupted, services_.budget.result_limit());
    view_.command_finished(outcome.exit_code, out.content);
    out.record = {{"command", command},
                  {"ran", outcome.ran_on_host ? "host" : "sandbox"},
                  {"exit_code", outcome.exit_code},
                  {"plan_mode", plan_mode}};
    if (outcome.decision) out.record["decision"] = to_string(*outcome.decision);
    return out;
}

ToolOutcome ToolRunner::start_job(const std::string& command, bool plan_mode) {
    view_.command_started(command, true);
    if (!services_.commands.has_background_jobs()) {
        std::string why =
            "background jobs need session mode, and Caretz runs with --no-session (a fresh "
            "sandbox per command, so nothing keeps running between commands)";
        view_.command_failed(why);
        return error_outcome(why + "; run the command in the foreground instead");
    }
    try {
        int id = services_.commands.start_job(command, plan_mode);
        ToolOutcome out;
        out.content = "started background job " + std::to_string(id) +
                      "; read its output with job_output and stop it with job_kill (job_id " +
                      std::to_string(id) + ")\n";
        out.record = {{"command", command},
                      {"ran", "sandbox"},
                      {"background", true},
                      {"job_id", id},
                      {"plan_mode", plan_mode}};
        view_.command_finished(0, out.content);
        return out;
    } catch (const SandboxStartError& e) {
        view_.command_failed(e.what());
        return error_outcome(std::string("the background job did not start: ") + e.what());
    }
}

ToolOutcome ToolRunner::job_output(int id) {
    view_.activity("job_output " + std::to_string(id));
    try {
        auto report = services_.commands.job_report(id, true);
        if (!report) return error_outcome("there is no background job " + std::to_string(id));
        ToolOutcome out;
        out.content = job_report_text(id, *report, services_.commands.columns(),
                                      services_.budget.result_limit());
        out.record = {{"job_id", id}, {"ran", "none"}, {"state", job_state_text(*report)}};
        return out;
    } catch (const SandboxStartError& e) {
        return error_outcome(std::string("the sandbox session ended: ") + e.what());
    }
}

ToolOutcome ToolRunner::job_kill(int id) {
    view_.activity("job_kill " + std::to_string(id));
    try {
        CommandRunner& commands = services_.commands;
        const bool sent = commands.kill_job(id);
        auto report = commands.job_report(id, false);
        if (!report) return error_outcome("there is no background job " + std::to_string(id));
        auto deadline = std::chrono::steady_clock::now() + kKillWait;
        while (sent && report && report->state == JobReport::State::running &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            report = commands.job_report(id, false);
        }
        std::string state = report ? job_state_text(*report) : "gone";
        ToolOutcome out;
        out.content = sent ? "job " + std::to_string(id) + " stopped: " + state + "\n"
                           : "job " + std::to_string(id) + " was not running: " + state + "\n";
        out.record = {{"job_id", id}, {"ran", "none"}, {"state", state}};
        return out;
    } catch (const SandboxStartError& e) {
        return error_outcome(std::string("the sandbox session ended: ") + e.what());
    }
}

}  // namespace caretz
