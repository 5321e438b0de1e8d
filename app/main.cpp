#include <unistd.h>

#include <cstdio>
#include <future>

#include "agent/acp_server.h"
#include "agent/instructions.h"
#include "agent/model_settings.h"
#include "agent/repl.h"
#include "agent/transcript.h"
#include "app/command_line.h"
#include "app/config.h"
#include "app/doctor.h"
#include "app/exec_command.h"
#include "app/resume.h"
#include "app/sandbox_spec.h"
#include "app/settings_loader.h"
#include "app/user_context.h"
#include "pty/fd_io.h"
#include "pty/signal_pipe.h"
#include "sandbox/cache_layer.h"
#include "sandbox/phase_times.h"
#include "sandbox/spawn.h"

using namespace caretz;

namespace {

// The settings in force (load_settings), or nothing once a config error has been said.
std::optional<Settings> settings_or_complaint(const CommandLine& cl) {
    try {
        return load_settings(cl, current_user_context());
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "caretz: %s\n", e.what());
        return std::nullopt;
    }
}

// The profile names a shell's completion offers for --profile, one a line.
int print_profile_names(const CommandLine& cl) {
    try {
        for (const auto& name : profile_names(read_config(cl, current_user_context())))
            std::printf("%s\n", name.c_str());
        return 0;
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "caretz: %s\n", e.what());
        return 2;
    }
}

// `caretz acp`: the same flags and config as the REPL; each session the client opens gets a
// sandbox whose workspace is the folder the client names.
int run_acp(const CommandLine& cl, const Settings& settings) {
    UserContext user = current_user_context();
    AcpConfig acp;
    acp.sandbox_for = [&cl, &settings, user](const std::string& cwd) {
        UserContext in_workspace = user;
        in_workspace.cwd = cwd;
        return sandbox_spec_for(cl, settings, in_workspace);
    };
    acp.new_pipeline_options = [&settings, user] { return pipeline_options(settings, user); };
    acp.fresh_per_command = cl.no_session;
    acp.plan_mode = cl.plan;
    acp.permission_timeout = settings.permission_timeout;
    acp.model = resolve_model_settings(ModelFlags{cl.provider, cl.model, cl.base_url}, user.env);
    acp.context_window = settings.context_window;
    acp.instructions_for = [user](const std::string& cwd) {
        return load_instructions(kMachineInstructionsDir, config_dir(user.home), cwd);
    };
    acp.sessions_dir = Transcript::sessions_dir(user.home);
    return serve_acp_on_stdio(acp);
}

// `caretz sandbox show`: the policy this folder would get, changing nothing on the host.
int run_sandbox_show(const CommandLine& cl, const Settings& settings) {
    const UserContext user = current_user_context();
    const SandboxReport report =
        sandbox_report_for(cl, settings, user, effective_policy(cl, settings, user));
    write_all(STDOUT_FILENO, cl.json ? report_json(report) : report_text(report));
    return 0;
}

// `caretz cache clear`: empties this folder's private cache layer.
int run_cache_clear() {
    const UserContext user = current_user_context();
    const std::string store = workspace_cache_store(user);
    const std::uintmax_t size = cache_store_size(store);
    if (std::string problem = clear_cache_store(store); !problem.empty()) {
        std::fprintf(stderr, "caretz: %s\n", problem.c_str());
        return 1;
    }
    std::printf("caretz: emptied the private cache layer of %s (%ju bytes) in %s\n",
                user.cwd.c_str(), size, store.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    auto parsed = parse_command_line(argc, argv);
    if (auto* code = std::get_if<int>(&parsed)) return *code;
    const CommandLine& cl = std::get<CommandLine>(parsed);
    if (cl.mode == Mode::profiles) return print_profile_names(cl);
    // The modes left start sandboxes, all but `sandbox show`, which only describes one.
    if (cl.mode == Mode::cache_clear) return run_cache_clear();
    if (cl.mode != Mode::sandbox_show) hold_inside_executable();
    if (cl.mode == Mode::doctor) return run_doctor(cl);
    auto settings = settings_or_complaint(cl);
    if (!settings) return 2;
    phase_done("settings");
    switch (cl.mode) {
        case Mode::exec:
            return run_exec(cl, *settings);
        case Mode::acp:
            return run_acp(cl, *settings);
        case Mode::sandbox_show:
            return run_sandbox_show(cl, *settings);
        case Mode::cache_clear:  // done above: it reads no config
        case Mode::doctor:       // both read the config themselves (above), so that a config
        case Mode::profiles:     // error is theirs to report
        case Mode::repl:
            break;
    }
    UserContext user = current_user_context();
    // Held until Caretz ends: no other Caretz may write the conversation meanwhile.
    std::optional<ResumedConversation> resumed;
    if (cl.continue_latest || cl.resume) {
        auto found = resume_conversation(cl, Transcript::sessions_dir(user.home), user.cwd);
        if (auto* code = std::get_if<int>(&found)) return *code;
        resumed.emplace(std::move(std::get<ResumedConversation>(found)));
    }
    ReplConfig repl;
    // The search for repositories runs while the prompt is up; the first command waits for it.
    // Its threads take no signals.
    {
        SignalsBlocked inherited;
        repl.sandbox = std::async(std::launch::async, [&cl, settings = *settings, user] {
                           PreparedSandbox prepared;
                           prepared.spec = sandbox_spec_for(cl, settings, user, prepared.notes);
                           prepared.report =
                               sandbox_report_for(cl, settings, user, prepared.spec.policy);
                           return prepared;
                       }).share();
    }
    repl.cwd = user.cwd;
    repl.shell = user.shell;
    repl.fresh_per_command = cl.no_session;
    repl.plan_mode = cl.plan;
    repl.pipeline = pipeline_options(*settings, user);
    repl.permission_timeout = settings->permission_timeout;
    repl.notice = settings->notice;
    repl.model = resolve_model_settings(ModelFlags{cl.provider, cl.model, cl.base_url}, user.env);
    repl.context_window = settings->context_window;
    repl.instructions = load_instructions(kMachineInstructionsDir, config_dir(user.home), user.cwd);
    repl.first_prompt = cl.prompt;
    repl.print = cl.print;
    repl.transcript_path =
        Transcript::sessions_dir(user.home) + "/" + repl.pipeline.session_id + ".jsonl";
    repl.history_path = Transcript::history_path(user.home);
    if (resumed) {
        repl.transcript_path = resumed->transcript_path;
        // The model the conversation last used, unless --model names another.
        if (cl.model.empty()) repl.model.model = resumed->replayed.model;
        repl.resumed = std::move(resumed->replayed);
    }
    return run_repl(repl);
}
