#include "agent/repl.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <iterator>

#include "agent/agent.h"
#include "agent/command_runner.h"
#include "agent/line_editor.h"
#include "agent/model_client.h"
#include "agent/tool_result.h"
#include "agent/transcript.h"
#include "escalation/offer.h"
#include "escalation/terminal_approver.h"
#include "pty/fd_io.h"
#include "pty/terminal.h"

namespace caretz {

namespace {

constexpr const char* kHelp =
    "TEXT         ask the model; Ctrl-C stops its turn and the command it runs\n"
    "!COMMAND     run COMMAND in the sandbox session (cd, exports and functions persist)\n"
    "/plan        plan mode on or off: a read-only sandbox, nothing runs outside it\n"
    "/allowances  commands you allowed outside the sandbox for this session\n"
    "/sandbox     the sandbox in force: paths, environment, network, and what set each\n"
    "/jobs        the model's background jobs\n"
    "/compact [WHAT]  summarize the older conversation now to free the model's context,\n"
    "             keeping WHAT especially; Caretz also does it by itself before the window fills\n"
    "/clear       start a new conversation in the same sandbox session\n"
    "/status      model, context used, tokens spent, sandbox mode, allowances, AGENTS.md files\n"
    "/model NAME  use model NAME for the next requests of this conversation\n"
    "/help        this text\n"
    "/quit        leave Caretz (Ctrl-D too)\n";

// One Caretz session: its sandboxes, the model, the transcript and the main agent. Lines come
// in from whichever front end runs it.
class Repl {
public:
    // `terminal` is the user's, or nullptr when Caretz runs without one.
    Repl(const ReplConfig& config, Terminal* terminal, ViewTargets view)
        : config_(config),
          terminal_(terminal),
          interactive_(terminal != nullptr),
          plan_mode_(config.plan_mode),
          approver_(terminal ? std::make_optional<TerminalApprover>(
                                   *terminal, config.permission_timeout, config.notice)
                             : std::nullopt),
          commands_([sandbox = config.sandbox] { return sandbox.get().spec; },
                    config.fresh_per_command, config.pipeline, approver_ ? &*approver_ : nullptr),
          model_(config.model),
          transcript_(config.resumed ? Transcript(config.transcript_path)
                                     : Transcript(config.transcript_path,
                                                  transcript_header(config.pipeline.session_id,
                                                                    config.model, config.cwd))),
          services_{model_,
                    commands_,
                    transcript_,
                    PromptFacts{config.cwd, config.shell, false, false, !config.fresh_per_command,
                                config.instructions.text},
                    terminal,
                    0,
                    ContextBudget(config.context_window, config.model.model),
                    {}},
          agent_(services_, TurnView(view), Agent::Kind::main, "main") {
        if (config.resumed) resume(*config.resumed);
    }

    // Handles one line; false when the user asked to leave.
    bool handle(const std::string& line) {
        if (line.find_first_not_of(" \t") == std::string::npos) return true;
        if (line == "/quit" || line == "/exit") return false;
        if (line == "/help") {
            say(kHelp);
        } else if (line == "/allowances") {
            list_allowances();
        } else if (line == "/sandbox") {
            show_sandbox();
        } else if (line == "/plan") {
            toggle_plan_mode();
        } else if (line == "/jobs") {
            list_jobs();
        } else if (line == "/compact" || line.starts_with("/compact ")) {
            compact(line.substr(std::string_view("/compact").size()));
        } else if (line == "/clear") {
            agent_.clear();
            say("Started a new conversation; the sandbox session, its shell and its jobs go on.\n");
        } else if (line == "/status") {
            show_status();
        } else if (line == "/model" || line.starts_with("/model ")) {
            change_model(line.substr(std::string_view("/model").size()));
        } else if (line[0] == '/' && line.find(' ') == std::string::npos &&
                   line.find('/', 1) == std::string::npos) {
            say("caretz: there is no command " + shown_escaped(line) + "; /help lists them\n");
        } else if (line[0] == '!') {
            run_user_command(line.substr(1));
        } else {
            prompt(line);
        }
        return true;
    }

    // Runs one turn of the model on `text`.
    TurnOutcome prompt(const std::string& text) {
        TurnOutcome outcome;
        if (std::string problem = missing_key_problem(config_.model); !problem.empty()) {
            outcome.error = problem;
            say("caretz: " + problem + "\n");
        } else {
            TurnInterrupt interrupt(terminal_);
            outcome = agent_.run_turn(text, plan_mode_, interrupt);
        }
        if (!outcome.ok()) failed_turns_ = true;
        warn_about_transcript();
        return outcome;
    }

    bool plan_mode() const { return plan_mode_; }
    bool failed_turns() const { return failed_turns_; }
    // Before each prompt (after each line, without a terminal): the sandbox's notes if the
    // search has ended since, and the check for repositories, which background jobs may have
    // made since the last one. After a `!` command that only ran in the sandbox, that check was
    // a moment ago: a second one would find the same, and past the watch limits it costs as
    // much.
    void before_next_line() {
        say_sandbox_notes(std::chrono::milliseconds(0));
        if (!checked_at_command_end_) commands_.secure_repositories();
        checked_at_command_end_ = false;
    }

    // What there is to say about the sandbox (sandbox_spec_for's notes), once: when the search
    // has ended, waiting for it, or for `within` at most.
    void say_sandbox_notes(std::optional<std::chrono::milliseconds> within = std::nullopt) {
        if (notes_said_) return;
        if (!within)
            config_.sandbox.wait();
        else if (config_.sandbox.wait_for(*within) != std::future_status::ready)
            return;
        notes_said_ = true;
        for (const auto& note : config_.sandbox.get().notes) say(note + "\n");
    }

private:
    // Only the conversation comes back: the sandbox session and what was allowed in it were
    // the earlier Caretz session's.
    void resume(const ReplayedConversation& resumed) {
        agent_.restore(resumed.conversation);
        transcript_.record({{"type", "resumed"}, {"caretz_session", config_.pipeline.session_id}});
        std::string interrupted =
            resumed.interrupted_calls == 0
                ? ""
                : "; " + std::to_string(resumed.interrupted_calls) +
                      " command(s) still running when it ended are marked interrupted";
        say("Continuing the conversation " + resumed.session_id + " (" +
            std::to_string(resumed.conversation.size()) + " messages" + interrupted +
            "). This is a new sandbox session: the earlier shell state, background jobs and "
            "private /tmp are gone, and no earlier allowance applies.\n");
        warn_about_transcript();
    }

    void say(std::string_view text) {
        write_all(interactive_ ? STDOUT_FILENO : STDERR_FILENO, text);
    }

    void warn_about_transcript() {
        if (transcript_warned_ || transcript_.problem().empty()) return;
        transcript_warned_ = true;
        say("caretz: " + transcript_.problem() + "\n");
    }

    void toggle_plan_mode() {
        plan_mode_ = !plan_mode_;
        say(plan_mode_ ? "Plan mode is on: commands run in a read-only sandbox, and nothing runs "
                         "outside it.\n"
                       : "Plan mode is off.\n");
    }

    void compact(std::string what) {
        what.erase(0, what.find_first_not_of(" \t"));
        TurnInterrupt interrupt(terminal_);
        TurnOutcome outcome = agent_.compact(what, interrupt);
        if (outcome.interrupted)
            say("caretz: compacting stopped (Ctrl-C); nothing changed\n");
        else if (!outcome.error.empty())
            say("caretz: nothing to compact: " + outcome.error + "\n");
        warn_about_transcript();
    }

    void change_model(std::string name) {
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        if (name.empty() || name.find_first_of(" \t") != std::string::npos) {
            say("caretz: the model is " + shown_escaped(model_.settings().model) +
                "; /model NAME uses another for the next requests\n");
            return;
        }
        model_.set_model(name);
        services_.budget.set_model(name);
        transcript_.record({{"type", "model"}, {"model", name}});
        const long window = services_.budget.window();
        say("The next requests go to " + shown_escaped(name) + " (context window: " +
            (window > 0 ? std::to_string(window) + " tokens" : std::string("unknown")) + ").\n");
    }

    void show_status() {
        const ModelSettings& model = model_.settings();
        const ContextBudget& budget = services_.budget;
        const Agent::ContextSize used = agent_.context_size();
        std::string context =
            (used.estimated ? "about " : "") + std::to_string(used.tokens) + " tokens";
        if (budget.window() > 0)
            context += " of " + std::to_string(budget.window()) + " (" +
                       std::to_string(used.tokens * 100 / budget.window()) + "%; window from " +
                       budget.window_source() + ")";
        else
            context +=
                "; the window is unknown until the server states it (config key "
                "model.context_window sets it)";
        const SessionUsage& usage = services_.usage;
        std::string text =
            "Model:        " + shown_escaped(model.model) + " (" +
            (model.provider == Provider::anthropic ? "anthropic" : "openai") + " API at " +
            shown_escaped(model.base_url) + ")\n" + "Session:      " + config_.pipeline.session_id +
            " (transcript " + transcript_.path() + ")\n" + "Context:      " + context + "\n" +
            "Spent:        " + std::to_string(usage.input) + " tokens in, " +
            std::to_string(usage.output) + " out, over " + std::to_string(usage.requests) +
            (usage.requests == 1 ? " request" : " requests") + "; " +
            std::to_string(usage.compactions) +
            (usage.compactions == 1 ? " compaction\n" : " compactions\n") + "Sandbox:      " +
            (config_.fresh_per_command ? "a fresh sandbox per command (--no-session)"
                                       : "one sandbox session") +
            (plan_mode_ ? ", plan mode" : "") + "; --ask-sandbox-off " +
            (config_.pipeline.ask_sandbox_off ? "on" : "off") + "\n" +
            "Allowances:   " + std::to_string(commands_.allowances().list().size()) +
            " commands allowed outside the sandbox for this session (/allowances lists them)\n";
        if (config_.instructions.files.empty()) {
            text += "Instructions: no AGENTS.md file\n";
        } else {
            for (size_t i = 0; i < config_.instructions.files.size(); ++i) {
                const InstructionFile& f = config_.instructions.files[i];
                text += std::string(i == 0 ? "Instructions: " : "              ") +
                        shown_escaped(f.path) + " (" + std::to_string(f.bytes) + " bytes" +
                        (f.used < f.bytes ? ", " + std::to_string(f.used) + " of them sent" : "") +
                        ")\n";
            }
        }
        say(text);
    }

    void list_allowances() {
        auto list = commands_.allowances().list();
        if (list.empty()) say("No command is allowed outside the sandbox in this session.\n");
        for (const auto& command : list) say("  " + shown_escaped(command) + "\n");
    }

    void show_sandbox() {
        say_sandbox_notes();
        SandboxReport report = config_.sandbox.get().report;
        if (plan_mode_ != report.plan_mode) report.plan_mode_source = "/plan";
        report.plan_mode = plan_mode_;
        report.session_network_allowances = commands_.network_allowances();
        say(report_text(report));
    }

    void list_jobs() {
        auto jobs = commands_.jobs();
        if (jobs.empty()) say("No background jobs in this session.\n");
        for (const auto& [id, command] : jobs) {
            std::string state = "gone";
            try {
                if (auto report = commands_.job_report(id, false)) state = job_state_text(*report);
            } catch (const SandboxStartError& e) {
                state = e.what();
            }
            say("  " + std::to_string(id) + "  " + state + "  " + shown_escaped(command) + "\n");
        }
    }

    void run_user_command(const std::string& command) {
        if (command.find_first_not_of(" \t") == std::string::npos) return;
        say_sandbox_notes();
        CommandIo io;
        io.terminal = terminal_;
        io.stdin_from_terminal = interactive_;
        char last = '\n';
        io.on_output = [&last](std::string_view bytes) {
            write_all(STDOUT_FILENO, bytes);
            if (!bytes.empty()) last = bytes.back();
        };
        io.output_to_terminal = terminal_ != nullptr;
        try {
            CommandOutcome result =
                commands_.run(CommandRequest{command, CommandSource::user, plan_mode_}, io);
            // Nothing ran on the host and nobody was asked, so nothing waited after the check
            // that ended its sandboxed attempt.
            checked_at_command_end_ =
                !result.ran_on_host &&
                (!result.decision || *result.decision == Decision::nobody_to_ask);
            if (interactive_ && last != '\n') end_unfinished_line();
            transcript_.record({{"type", "user_command"},
                                {"command", command},
                                {"ran", result.ran_on_host ? "host" : "sandbox"},
                                {"exit_code", result.exit_code},
                                {"plan_mode", plan_mode_}});
            if (result.shell_exited) {
                say("caretz: the command ended the session shell (status " +
                    std::to_string(result.exit_code) + "); the next command starts a fresh one\n");
            } else if (interactive_ && result.exit_code != 0) {
                say("[exit " + std::to_string(result.exit_code) + "]\n");
            }
        } catch (const SandboxStartError& e) {
            say(std::string("caretz: ") + e.what() + "\n");
        }
        warn_about_transcript();
    }

    // Output that did not end its line would be drawn over by the next prompt. As zsh does, a
    // reverse-video '%' marks where it stopped, followed by spaces to the window's width: from
    // a column past the first they wrap, and the prompt starts on the line below; from the
    // first column (output that ended with escape sequences, such as a program leaving the
    // alternate screen) they fill the line without wrapping, and the return and erase that
    // follow take the mark away again.
    void end_unfinished_line() {
        auto size = terminal_->size();
        if (!size || size->cols < 2) {
            write_all(STDOUT_FILENO, "\n");
            return;
        }
        write_all(STDOUT_FILENO,
                  "\x1b[7m%\x1b[27m" + std::string(size->cols - 1, ' ') + "\r\x1b[K");
    }

    const ReplConfig& config_;
    Terminal* terminal_;
    bool interactive_;
    bool plan_mode_;
    std::optional<TerminalApprover> approver_;
    CommandRunner commands_;
    ModelClient model_;
    Transcript transcript_;
    AgentServices services_;
    Agent agent_;
    bool failed_turns_ = false;
    bool transcript_warned_ = false;
    bool checked_at_command_end_ = false;  // before_next_line() has no repository to check for
    bool notes_said_ = false;
};

int run_interactive(Terminal& terminal, const ReplConfig& config) {
    Repl repl(config, &terminal, ViewTargets{STDOUT_FILENO, STDOUT_FILENO, STDOUT_FILENO, ""});
    LineEditor editor(terminal, [&terminal] {
        return static_cast<int>(terminal.size().value_or(WindowSize{}).cols);
    });
    editor.history().load(config.history_path);
    write_all(STDOUT_FILENO, "Caretz: commands run in a sandbox; model " + config.model.model +
                                 ". Type /help for help.\n");
    // In most workspaces the search for repositories is done within a tenth of a second, and
    // what it has to say comes before the first prompt; in a very large one the prompt comes
    // first, and the notes before a later one.
    repl.say_sandbox_notes(std::chrono::milliseconds(100));
    auto prompt_text = [&] { return repl.plan_mode() ? "caretz (plan)> " : "caretz> "; };
    if (!config.first_prompt.empty()) {
        write_all(STDOUT_FILENO, prompt_text() + shown_escaped(config.first_prompt) + "\n");
        editor.history().add_and_save(config.first_prompt, config.history_path);
        repl.prompt(config.first_prompt);
    }
    while (true) {
        repl.before_next_line();
        LineResult r = editor.read_line(prompt_text());
        if (r.kind == LineResult::eof) break;
        if (r.kind == LineResult::interrupted) continue;
        editor.history().add_and_save(r.text, config.history_path);
        if (!repl.handle(r.text)) break;
    }
    return 0;
}

int run_script(const ReplConfig& config) {
    Repl repl(config, nullptr, ViewTargets{STDOUT_FILENO, STDERR_FILENO, STDERR_FILENO, ""});
    repl.say_sandbox_notes();  // no prompt to show meanwhile
    std::string line;
    while (std::getline(std::cin, line)) {
        if (!repl.handle(line)) break;
        repl.before_next_line();
    }
    return repl.failed_turns() ? 1 : 0;
}

// --print: one prompt to the end, nobody asked, the final answer alone on stdout.
int run_print(const ReplConfig& config) {
    std::string prompt = config.first_prompt;
    if (prompt.empty())
        prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (prompt.find_first_not_of(" \t\r\n") == std::string::npos) {
        std::fputs("caretz: --print needs a prompt: -p PROMPT, or the prompt on stdin\n", stderr);
        return 2;
    }
    Repl repl(config, nullptr, ViewTargets{-1, STDERR_FILENO, STDERR_FILENO, ""});
    repl.say_sandbox_notes();
    TurnOutcome outcome = repl.prompt(prompt);
    if (!outcome.ok()) return 1;
    std::string answer = outcome.answer;
    if (answer.empty() || answer.back() != '\n') answer += '\n';
    write_all(STDOUT_FILENO, answer);
    return 0;
}

}  // namespace

int run_repl(const ReplConfig& config) {
    if (config.print) return run_print(config);
    std::unique_ptr<Terminal> terminal = Terminal::open_standard();
    if (terminal) return run_interactive(*terminal, config);
    if (!config.first_prompt.empty()) return run_print(config);
    return run_script(config);
}

}  // namespace caretz
