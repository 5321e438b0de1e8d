#include "agent/repl.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <iostream>

#include "agent/line_editor.h"
#include "escalation/offer.h"
#include "pty/terminal_modes.h"

namespace caretz {

namespace {

std::atomic<bool> window_resized{false};

void on_sigwinch(int) { window_resized = true; }

void write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n <= 0) return;
        data.remove_prefix(static_cast<size_t>(n));
    }
}

constexpr const char* kNoModel =
    "caretz: no model is configured yet, so only !COMMAND lines run (in the sandbox).\n"
    "Type /help for the commands.\n";

constexpr const char* kHelp =
    "!COMMAND     run COMMAND in the sandbox session (cd, exports and functions persist)\n"
    "/allowances  commands you allowed outside the sandbox for this session\n"
    "/help        this text\n"
    "/quit        leave Caretz (Ctrl-D too)\n";

// The REPL's state: the sandbox (started at the first command) and where output goes.
class Repl {
public:
    Repl(const ReplConfig& config, TerminalModes* modes)
        : config_(config), modes_(modes), interactive_(modes != nullptr) {}

    // Handles one line; false when the user asked to leave.
    bool handle(const std::string& line) {
        if (line.empty()) return true;
        if (line == "/quit" || line == "/exit") return false;
        if (line == "/help") {
            say(kHelp);
        } else if (line == "/allowances") {
            list_allowances();
        } else if (line[0] == '!') {
            run_user_command(line.substr(1));
        } else {
            say(kNoModel);
        }
        return true;
    }

private:
    void say(std::string_view text) { write_all(interactive_ ? STDOUT_FILENO : STDERR_FILENO, text); }

    void list_allowances() {
        auto list = allowances_.list();
        if (list.empty()) say("No command is allowed outside the sandbox in this session.\n");
        for (const auto& command : list) say("  " + shown_escaped(command) + "\n");
    }

    void run_user_command(const std::string& command) {
        if (command.find_first_not_of(" \t") == std::string::npos) return;
        try {
            if (!sandbox_) {
                spec_ = current_spec();
                sandbox_ = open_sandbox(spec_, config_.fresh_per_command);
                pipeline_ = std::make_unique<CommandPipeline>(
                    *sandbox_, spec_, config_.pipeline, allowances_,
                    UserTerminal{interactive_ ? STDIN_FILENO : -1, modes_});
            }
            CommandIo io;
            io.input_fd = interactive_ ? STDIN_FILENO : -1;
            io.stdin_from_terminal = interactive_;
            io.on_output = [](std::string_view bytes) { write_all(STDOUT_FILENO, bytes); };
            io.take_resize = [this]() { return take_resize(); };
            CommandOutcome result =
                pipeline_->run(CommandRequest{command, CommandSource::user, config_.plan_mode}, io);
            if (result.shell_exited) {
                say("caretz: the command ended the session shell (status " +
                    std::to_string(result.exit_code) +
                    "); the next command starts a fresh one\n");
            } else if (interactive_ && result.exit_code != 0) {
                say("[exit " + std::to_string(result.exit_code) + "]\n");
            }
        } catch (const SandboxStartError& e) {
            pipeline_.reset();
            sandbox_.reset();
            say(std::string("caretz: ") + e.what() + "\n");
        }
    }

    SandboxSpec current_spec() const {
        SandboxSpec spec = config_.sandbox;
        if (interactive_) {
            try {
                spec.size = window_size(STDOUT_FILENO);
            } catch (const std::exception&) {
            }
        }
        return spec;
    }

    std::optional<WindowSize> take_resize() {
        if (!window_resized.exchange(false)) return std::nullopt;
        try {
            return window_size(STDOUT_FILENO);
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }

    const ReplConfig& config_;
    TerminalModes* modes_;
    bool interactive_;
    SandboxSpec spec_;
    SessionAllowances allowances_;
    std::unique_ptr<Sandbox> sandbox_;
    std::unique_ptr<CommandPipeline> pipeline_;
};

int run_interactive(const ReplConfig& config) {
    TerminalModes modes(STDIN_FILENO);
    modes.install_exit_handlers();
    struct sigaction sa {};
    sa.sa_handler = on_sigwinch;  // no SA_RESTART: a resize wakes the waits
    ::sigaction(SIGWINCH, &sa, nullptr);
    modes.enter_raw();

    Repl repl(config, &modes);
    LineEditor editor(STDIN_FILENO, STDOUT_FILENO, [] {
        try {
            return static_cast<int>(window_size(STDOUT_FILENO).cols);
        } catch (const std::exception&) {
            return 80;
        }
    });
    write_all(STDOUT_FILENO, "Caretz: commands run in a sandbox. Type /help for help.\n");
    while (true) {
        LineResult r = editor.read_line("caretz> ");
        if (r.kind == LineResult::eof) break;
        if (r.kind == LineResult::interrupted) continue;
        if (!r.text.empty()) editor.add_history(r.text);
        if (!repl.handle(r.text)) break;
    }
    return 0;
}

int run_script(const ReplConfig& config) {
    Repl repl(config, nullptr);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (!repl.handle(line)) break;
    }
    return 0;
}

}  // namespace

int run_repl(const ReplConfig& config) {
    if (::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO)) return run_interactive(config);
    return run_script(config);
}

}  // namespace caretz
