#include "app/command_line.h"

#include <CLI/CLI.hpp>
#include <sstream>
#include <vector>

#include "app/completions.h"
#include "app/duration.h"
#include "escalation/credential_fallbacks.h"
#include "sandbox/protection/hidden_defaults.h"

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

// The administrator's files, whose paths no flag or variable changes.
std::string machine_files_help() {
    return wrapped(std::string("Machine-wide: ") + kMachineConfigPath +
                       " is read before your config, which overrides it key by key. " +
                       kMachinePolicyPath +
                       " is what the administrator enforces: no config, profile or flag can go "
                       "past it (trying is an error naming the key and the policy), and Caretz "
                       "does not start when it is malformed or others than root may change it.",
                   90);
}

// What every sandbox hides, from the one table (sandbox/protection/hidden_defaults.cpp).
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
                       "back; only your own config file and /etc/caretz/config.json can set it. "
                       "sandbox.hidden adds paths. When " +
                       tools +
                       " fails after going on without a hidden store, the "
                       "offer names that store.",
                   90);
}

// What stays read-only in the writable roots (sandbox/protection/host_run_paths.cpp).
std::string host_run_help() {
    return wrapped(
        "Read-only in every writable root, whether it exists or not: what the host runs later "
        "(shell startup and logout files, login and desktop session files, systemd user units, "
        "autostart entries, environment.d, ~/.local/bin, ~/bin and your PATH's folders, "
        "Python's user site, the startup files of vim, neovim, emacs, tmux and screen, and in "
        "each repository, at every depth, editors' and AI tools' folders (.vscode, .idea, "
        ".devcontainer, .claude, ...), mise's configs, an .envrc or .mcp.json that exists, and "
        "the configs of installed hook managers). A write refused there gets the offer like any "
        "other. sandbox.writable naming one of them, or an entry of the home's configuration, "
        "exactly opens it (the table's own paths in an opened entry stay read-only), unless the "
        "machine policy sets sandbox.open_host_run to false.",
        90);
}

// What keeps a long session going, and what the model reads besides the conversation.
std::string long_session_help() {
    return wrapped(
        "A full context window never ends a session: Caretz compacts the conversation before "
        "the window fills (old command outputs first, then a summary of older turns by the "
        "model), and compacts and retries once when a server refuses a request as too large. "
        "One command's result holds at most 16 KiB. Config key model.context_window gives a "
        "local server's window in tokens. In a session, /compact [WHAT], /clear, /status and "
        "/model NAME. AGENTS.md from /etc/caretz, $XDG_CONFIG_HOME/caretz and the repository "
        "down to the start folder reach the model (32 KiB in all), as input only.",
        90);
}

// How a waiting question makes itself noticed, and where to see the sandbox in force.
std::string notice_help() {
    return wrapped(
        "While an offer or a network approval waits, Caretz rings the bell, sends a "
        "desktop notification (OSC 9 and OSC 777; inside tmux in its passthrough "
        "form where allow-passthrough is on) and sets the window title until you "
        "answer. Config key notify: \"desktop\" (default), \"bell\" or \"off\"; "
        "notify_command: a program and its arguments that also gets the question "
        "(as its last argument and in $CARETZ_QUESTION), from your own config only. "
        "caretz sandbox show [--json], and /sandbox in a session, print the sandbox "
        "in force with the config file or flag that set each value.",
        90);
}

void add_shared_options(CLI::App& app, CommandLine& cl, std::string& timeout) {
    app.add_flag_callback(
        "--ask-sandbox-off",
        [&] {
            cl.flags.ask_sandbox_off = true;
            cl.flags.sources["ask_sandbox_off"] = "--ask-sandbox-off";
        },
        "Offer to rerun a command outside the sandbox when the sandbox "
        "refused it (you decide each time, seeing what its attempt already changed)");
    app.add_option_function<std::string>(
           "--profile", [&](const std::string& p) { cl.profile = p; },
           "Use a profile from the config file or a built-in one (ops)")
        ->type_name(kProfileValue);
    app.add_option("--permission-timeout", timeout,
                   "Deny an unanswered offer after this long (90s, 5m, 1h); default: wait")
        ->type_name(kDurationValue);
    app.add_flag_callback(
        "--allow-docker",
        [&] {
            cl.flags.allow_docker = true;
            cl.flags.sources["allow_docker"] = "--allow-docker";
        },
        "Give sandboxed commands the host's Docker socket");
    app.add_flag("--plan", cl.plan, "Plan mode: read-only sandbox, never offers a rerun");
    app.add_flag("--print", cl.print, "Run the prompt to the end, print the answer, never ask");
    app.add_option("--model", cl.model, "Model name");
    app.add_option("--provider", cl.provider, "Model API: openai or anthropic")
        ->check(CLI::IsMember({"openai", "anthropic"}));
    app.add_option("--base-url", cl.base_url, "Base URL of the model API");
    app.add_option_function<std::string>(
           "--config", [&](const std::string& f) { cl.config_file = f; },
           "Config file (default: $XDG_CONFIG_HOME/caretz/config.json), laid over "
           "/etc/caretz/config.json")
        ->type_name(kFileValue);
    app.add_flag("--no-session", cl.no_session, "Run each command in a fresh sandbox");
    app.add_flag("--json", cl.json,
                 "caretz exec: print one JSON object with the result; caretz sandbox show: the "
                 "policy as JSON");
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
    app.footer(hidden_paths_help() + "\n\n" + host_run_help() + "\n\n" + machine_files_help() +
               "\n\n" + notice_help() + "\n\n" + long_session_help() + "\n\n" +
               wrapped("Shell completions for bash, zsh and fish come with Caretz (cmake "
                       "--install puts them where each shell looks); after --profile they offer "
                       "the profiles of your config file.",
                       90));
    add_shared_options(app, cl, timeout);
    app.add_option("-p,--prompt", cl.prompt, "The first prompt for the model");
    CLI::Option* continue_latest =
        app.add_flag("--continue", cl.continue_latest,
                     "Continue the latest conversation started in this folder (in a new "
                     "sandbox session; allowances are not carried over)");
    CLI::Option* resume =
        app.add_option("--resume", cl.resume_id,
                       "Continue the conversation with this id (or the start of it); without "
                       "ID, list this folder's recent conversations to choose from")
            ->expected(0, 1)
            ->type_name("[ID]");
    continue_latest->excludes(resume);

    CLI::App* exec = app.add_subcommand("exec", "Run one command through the sandbox, as !COMMAND");
    exec->prefix_command();
    CLI::App* acp = app.add_subcommand("acp", "Serve the Agent Client Protocol on stdio");
    CLI::App* sandbox = app.add_subcommand(
        "sandbox", "Inspect the sandbox: caretz sandbox show [--json] prints it for this folder");
    CLI::App* sandbox_show = sandbox->add_subcommand(
        "show",
        "Show the sandbox for this folder: writable, read-only and hidden paths, environment, "
        "network, Docker, plan mode and profile, each with the config file or flag that set it");
    sandbox->require_subcommand(1);
    CLI::App* cache = app.add_subcommand(
        "cache", "The private cache layer: caretz cache clear empties this folder's");
    CLI::App* cache_clear = cache->add_subcommand(
        "clear",
        "Empty the private cache layer of this folder's sandboxes: later sandboxes see the "
        "host's caches as they are. Refused while a Caretz of this folder runs; "
        "\"sandbox\": {\"cache_layer\": false} in the config turns the layer off");
    cache->require_subcommand(1);
    // Options may come before or after the subcommand's name.
    add_shared_options(*exec, cl, timeout);
    add_shared_options(*acp, cl, timeout);
    add_shared_options(*sandbox_show, cl, timeout);
    add_shared_options(*cache_clear, cl, timeout);
    CLI::App* doctor = app.add_subcommand(
        "doctor", "Check what Caretz needs here, one line each, with the fix for each problem");
    add_shared_options(*doctor, cl, timeout);
    // Hidden: what the installed shell completions are generated with and call back into.
    std::string completion_target;
    CLI::App* completions = app.add_subcommand("completions", "")->group("");
    completions->add_option("target", completion_target)
        ->required()
        ->check(CLI::IsMember({"bash", "zsh", "fish", "profiles"}));
    add_shared_options(*completions, cl, timeout);
    app.require_subcommand(0, 1);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    if (!timeout.empty()) {
        cl.flags.permission_timeout = parse_duration(timeout);
        cl.flags.sources["permission_timeout"] = "--permission-timeout";
        if (!cl.flags.permission_timeout) {
            std::fprintf(stderr,
                         "caretz: --permission-timeout \"%s\" is not a duration; use a number "
                         "with s, m or h, such as 90s, 5m or 1h\n",
                         timeout.c_str());
            return 2;
        }
    }
    cl.resume = resume->count() > 0;
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
    } else if (sandbox_show->parsed()) {
        cl.mode = Mode::sandbox_show;
    } else if (cache_clear->parsed()) {
        cl.mode = Mode::cache_clear;
    } else if (doctor->parsed()) {
        cl.mode = Mode::doctor;
    } else if (completions->parsed()) {
        if (completion_target == "profiles") {
            cl.mode = Mode::profiles;
            return cl;
        }
        std::fputs(completion_script(app, completion_target).c_str(), stdout);
        return 0;
    }
    if ((cl.continue_latest || cl.resume) && cl.mode != Mode::repl) {
        std::fputs(
            "caretz: --continue and --resume continue a conversation with the model; use "
            "them without a subcommand (ACP editors load sessions with session/load)\n",
            stderr);
        return 2;
    }
    return cl;
}

}  // namespace caretz
