#include "app/command_line.h"

#include <CLI/CLI.hpp>
#include <sstream>
#include <vector>

#include "app/duration.h"
#include "escalation/credential_fallbacks.h"
#include "sandbox/hidden_defaults.h"

namespace caretz {

namespace {

constexpr const char* kVersion = "caretz 0.1.0";

// Words joined with spaces into lines of at most `width` columns.
std::string wrapped(const std::string& text, size_t width) {
    std::string out, line, word;
    std::istringstream words(text);
    while (words >> word) {
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return out + line;
}

// What every sandbox hides, from the one table (sandbox/hidden_defaults.cpp).
std::string hidden_paths_help() {
    std::string always, stores, tools;
    for (const auto& row : hidden_by_default()) {
        std::string& list = row.showable ? stores : always;
        list += (list.empty() ? "" : ", ") + describe(row.where);
    }
    std::vector<std::string> programs = programs_to_watch();
    std::erase(programs, "sudo");
    for (std::size_t i = 0; i < programs.size(); ++i)
        tools += (i == 0 ? "" : i + 1 == programs.size() ? " or " : ", ") + programs[i];
    return wrapped("Hidden from sandboxed commands (they look missing): " + always +
                       ", and these credential stores: " + stores +
                       ". Paths under ~/.config, ~/.local/share and ~/.local/state are hidden "
                       "where $XDG_CONFIG_HOME, $XDG_DATA_HOME and $XDG_STATE_HOME put them "
                       "too. Config key sandbox.visible (a list of paths) gives credential stores "
                       "back; only your own config file can set it. sandbox.hidden adds paths. "
                       "When " +
                       tools +
                       " fails after going on without a hidden store, the "
                       "offer names that store.",
                   90);
}

void add_shared_options(CLI::App& app, CommandLine& cl, std::string& timeout) {
    app.add_flag_callback(
        "--ask-sandbox-off", [&] { cl.flags.ask_sandbox_off = true; },
        "Offer to rerun a command outside the sandbox when the sandbox "
        "refused it (you decide each time)");
    app.add_option_function<std::string>(
        "--profile", [&](const std::string& p) { cl.profile = p; },
        "Use a profile from the config file or a built-in one (ops)");
    app.add_option("--permission-timeout", timeout,
                   "Deny an unanswered offer after this long (90s, 5m, 1h); default: wait");
    app.add_flag_callback(
        "--allow-docker", [&] { cl.flags.allow_docker = true; },
        "Give sandboxed commands the host's Docker socket");
    app.add_flag("--plan", cl.plan, "Plan mode: read-only sandbox, never offers a rerun");
    app.add_flag("--print", cl.print, "Run the prompt to the end, print the answer, never ask");
    app.add_option("--model", cl.model, "Model name");
    app.add_option("--provider", cl.provider, "Model API: openai or anthropic")
        ->check(CLI::IsMember({"openai", "anthropic"}));
    app.add_option("--base-url", cl.base_url, "Base URL of the model API");
    app.add_option_function<std::string>(
        "--config", [&](const std::string& f) { cl.config_file = f; },
        "Config file (default: $XDG_CONFIG_HOME/caretz/config.json)");
    app.add_flag("--no-session", cl.no_session, "Run each command in a fresh sandbox");
    app.add_flag("--json", cl.json, "caretz exec: print one JSON object with the result");
}

}  // namespace

std::variant<CommandLine, int> parse_command_line(int argc, char** argv) {
    CommandLine cl;
    std::string timeout;
    CLI::App app{
        "Caretz: a terminal coding agent for ops work. Every command runs in a "
        "bubblewrap sandbox; you decide when one may run outside it.",
        "caretz"};
    app.set_version_flag("--version", kVersion);
    app.footer(hidden_paths_help());
    add_shared_options(app, cl, timeout);
    app.add_option("-p,--prompt", cl.prompt, "The first prompt for the model");

    CLI::App* exec = app.add_subcommand("exec", "Run one command through the sandbox, as !COMMAND");
    exec->prefix_command();
    CLI::App* acp = app.add_subcommand("acp", "Serve the Agent Client Protocol on stdio");
    // Options may come before or after the subcommand's name.
    add_shared_options(*exec, cl, timeout);
    add_shared_options(*acp, cl, timeout);
    app.require_subcommand(0, 1);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    if (!timeout.empty()) {
        cl.flags.permission_timeout = parse_duration(timeout);
        if (!cl.flags.permission_timeout) {
            std::fprintf(stderr,
                         "caretz: --permission-timeout \"%s\" is not a duration; use a number "
                         "with s, m or h, such as 90s, 5m or 1h\n",
                         timeout.c_str());
            return 2;
        }
    }
    if (exec->parsed()) {
        cl.mode = Mode::exec;
        for (const auto& word : exec->remaining()) {
            if (word == "--" && cl.command.empty()) continue;
            cl.command += (cl.command.empty() ? "" : " ") + word;
        }
        if (cl.command.empty()) {
            std::fprintf(stderr, "caretz exec: no command given; usage: caretz exec 'COMMAND'\n");
            return 2;
        }
    } else if (acp->parsed()) {
        cl.mode = Mode::acp;
    }
    return cl;
}

}  // namespace caretz
