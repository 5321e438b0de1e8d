#include "app/doctor.h"

#include <fcntl.h>
#include <paths.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <utility>

#include "agent/model_client.h"
#include "app/sandbox_spec.h"
#include "app/settings_loader.h"
#include "app/user_context.h"
#include "escalation/audit_log.h"
#include "escalation/refusal_detector.h"
#include "hooks/shell_launch.h"
#include "pty/pty.h"
#include "pty/terminfo.h"
#include "pty/utmp_record.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/cache_layer.h"
#include "sandbox/layer_mounts.h"
#include "sandbox/network/network_proxy.h"
#include "sandbox/preflight.h"
#include "sandbox/sandbox_session.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

using Clock = std::chrono::steady_clock;

// Every session waits this long for its shell, so more is a problem worth fixing.
constexpr auto kShellStartLimit = std::chrono::seconds(1);
// A shell that has shown no prompt by then is reported as hanging.
constexpr auto kShellGiveUp = std::chrono::seconds(10);
constexpr auto kModelTimeout = std::chrono::seconds(5);

long ms_since(Clock::time_point start) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

DoctorCheck ok(std::string name, std::string detail) {
    return {std::move(name), std::move(detail), std::nullopt};
}

DoctorCheck problem(std::string name, std::string what) {
    return {std::move(name), "", std::move(what)};
}

DoctorCheck check_bubblewrap() {
    if (auto why = bubblewrap_problem()) return problem("bubblewrap", *why);
    std::string path = find_in_path("bwrap");
    auto version = output_of({path, "--version"}, {}, StderrTo::output);
    if (!version)
        return problem("bubblewrap", path +
                                         " does not run; reinstall it with: apt-get install "
                                         "--reinstall bubblewrap");
    return ok("bubblewrap", version->substr(0, version->find('\n')) + " (" + path + ")");
}

DoctorCheck check_user_namespaces() {
    if (auto why = user_namespace_problem()) return problem("user namespaces", *why);
    return ok("user namespaces", "this user can create them (one was made and ended)");
}

DoctorCheck check_config(const CommandLine& cl, const UserContext& user, Settings& settings) {
    std::string path = config_path(cl, user);
    try {
        settings = load_settings(cl, user);
    } catch (const ConfigError& e) {
        return problem("config",
                       std::string(e.what()) + "; correct it and run caretz doctor again");
    }
    std::string profile = cl.profile ? ", profile " + *cl.profile : "";
    if (!std::filesystem::exists(path))
        return ok("config", "no config file at " + path + "; the defaults apply" + profile);
    return ok("config", path + " is valid" + profile);
}

DoctorCheck check_shell(const UserContext& user) {
    try {
        shell_launch(user.shell, kHookDir, user.home);
    } catch (const UnsupportedShell& e) {
        return problem("shell", e.what());
    }
    return ok("shell", std::string(supported_shell_name(user.shell)) + " (" + user.shell +
                           "), which Caretz has hooks for");
}

// How to find what makes `shell` slow to start.
std::string slow_start_hint(std::string_view shell) {
    if (shell == "fish")
        return "see what takes the time with: fish --profile-startup /tmp/fish.prof -ic exit";
    return "see what runs with: " + std::string(shell) + " -ixc exit";
}

// The session shell started in the sandbox as every session starts it, then one command through
// it: its output, exit status and new folder must come back through the hooks' marks.
std::pair<DoctorCheck, DoctorCheck> check_session(const SandboxSpec& spec) {
    const std::string name(supported_shell_name(spec.shell));
    if (sandbox_unavailable_reason() || name.empty()) {
        const std::string not_tried = "not tried, as the sandbox cannot start (see above)";
        return {problem("shell start", not_tried), problem("hooks", not_tried)};
    }
    try {
        Clock::time_point start = Clock::now();
        SandboxSession session(spec);
        // The sandbox is up and the shell starting; from here on the time is the shell's own
        // and that of the user's rc files.
        const long sandbox_ms = ms_since(start);
        start = Clock::now();
        session.run("true", CommandIo{});
        const long shell_ms = ms_since(start);
        DoctorCheck started =
            Clock::now() - start <= kShellStartLimit
                ? ok("shell start", name + " with your rc files was ready in the sandbox in " +
                                        std::to_string(shell_ms) + " ms (bwrap itself started in " +
                                        std::to_string(sandbox_ms) + " ms)")
                : problem("shell start", name + " with your rc files took " +
                                             std::to_string(shell_ms) +
                                             " ms to be ready in the sandbox, which every "
                                             "session waits for; " +
                                             slow_start_hint(name));

        std::string output;
        CommandIo io;
        io.on_output = [&output](std::string_view bytes) { output.append(bytes); };
        start = Clock::now();
        SandboxResult result =
            session.run("cd /; echo caretz-doctor-round-trip; sh -c 'exit 3'", io);
        long round_trip_ms = ms_since(start);
        if (result.exit_code == 3 && result.cwd == "/" &&
            output.find("caretz-doctor-round-trip") != std::string::npos)
            return {started, ok("hooks",
                                "a command's output, exit status and folder came back "
                                "marked in " +
                                    std::to_string(round_trip_ms) + " ms")};
        return {
            started,
            problem("hooks", "the session shell's marks came back wrong (exit status " +
                                 std::to_string(result.exit_code) + " for 3, folder " + result.cwd +
                                 " for /); something in your rc files changes "
                                 "the prompt hooks (PROMPT_COMMAND, precmd_functions, "
                                 "fish_prompt); see what it prints with: caretz exec true")};
    } catch (const std::exception& e) {
        const std::string why = std::string("the session shell did not start in the sandbox: ") +
                                e.what() + "; see what it prints with: caretz exec true";
        return {problem("shell start", why), problem("hooks", "not tried (see above)")};
    }
}

// The layer as sandboxes get it: its overlays made for a real process, as for a sandbox.
DoctorCheck check_cache_layer(const SandboxPolicy& policy, const Settings& settings) {
    const CacheLayer& layer = policy.cache_layer;
    const std::string name = "cache layer";
    auto listed = [](const auto& items, auto name_of_item) {
        std::string out;
        for (const auto& item : items) out += (out.empty() ? "" : ", ") + name_of_item(item);
        return out;
    };
    const std::string folders = listed(layer.folders, [](const std::string& f) { return f; });
    const std::string variables =
        listed(layer.variables, [](const auto& variable) { return variable.first; });
    switch (layer.how) {
        case CacheLayer::How::none:
            if (policy.read_only) return ok(name, "off in plan mode: nothing is writable but /tmp");
            if (settings.sandbox.cache_layer)
                return problem(name, "off: its store could not be made (the note above says why)");
            return ok(name, "off (" + source_of(settings, "sandbox.cache_layer") +
                                "): the tools' caches are read-only in the sandbox, and a "
                                "command that writes one gets the offer to run outside");
        case CacheLayer::How::variables:
            return ok(name, "no overlay here (" + layer.without_overlay + "), so " + variables +
                                " point at a private folder of " + layer.store +
                                "; sandboxed tools do not see what the host's caches hold");
        case CacheLayer::How::overlay:
            break;
    }
    // Mounted while the session check's sandbox has the layer's own overlays: over upper
    // folders of its own, as a second Caretz's would be, since two live overlays over one
    // upper folder are undefined. Removed once this process has ended.
    CacheLayer beside = layer;
    beside.upper = "upper." + std::to_string(::getpid());
    try {
        if (const std::string why = make_cache_store(beside); !why.empty())
            throw SandboxStartError(why);
        make_layer_mounts(beside);
    } catch (const SandboxStartError& e) {
        return problem(name, std::string(e.what()) + ", so no sandbox can start");
    }
    std::string detail =
        folders.empty() ? "no cache folders on the host yet"
                        : "overlays over " + folders + ": sandboxed commands see what they hold";
    if (!variables.empty()) detail += "; " + variables + " point into the layer meanwhile";
    return ok(name, detail + "; what sandboxed commands write there stays in " + layer.store +
                        " (the host's caches are never written)");
}

// The user's session bus is hidden with /run like the system bus: `systemctl --user` and
// `brew services` cannot reach it from the sandbox, and their failure gets the offer.
DoctorCheck check_session_bus(const UserContext& user) {
    const std::string socket = session_bus_socket(user.env);
    struct stat st {};
    if (socket.empty() || ::stat(socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
        return ok("session bus", "none on this host" +
                                     (socket.empty() ? std::string(" ($XDG_RUNTIME_DIR is not set)")
                                                     : " (no socket at " + socket + ")"));
    return ok("session bus", socket +
                                 ": hidden from sandboxed commands; when one fails to reach it "
                                 "(systemctl --user, brew services), the offer names it");
}

DoctorCheck check_audit_log(const UserContext& user) {
    AuditLog log(AuditLog::default_path(user.home), /*to_syslog=*/false);
    if (auto why = log.unwritable_reason()) {
        std::string dir = std::filesystem::path(log.path()).parent_path();
        return problem("audit log", "cannot write " + log.path() + " (" + *why +
                                        "), and without it nothing may run outside the sandbox; "
                                        "make the folder yours and writable: chown -R \"$USER\" " +
                                        dir + " && chmod 700 " + dir);
    }
    return ok("audit log", log.path() + " is writable");
}

DoctorCheck check_network_proxy(const SandboxPolicy& policy) {
    try {
        auto proxy = start_network_proxy(policy);
        UniqueFd client(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        proxy->socket_path().copy(address.sun_path, sizeof address.sun_path - 1);
        if (::connect(client.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
            throw SandboxStartError("the proxy does not accept connections on " +
                                    proxy->socket_path());
    } catch (const std::exception& e) {
        return problem("network proxy",
                       std::string(e.what()) +
                           "; sandboxed commands would have no network; check that "
                           "$XDG_RUNTIME_DIR (or /tmp without it) is yours and writable");
    }
    return ok("network proxy", "started and accepted a connection");
}

// A PTY recorded as each session's is, from the host: `who` must list it while it is recorded.
DoctorCheck check_utmp() {
    bool registered = false;
    std::string line;
    try {
        Pty pty = Pty::open(WindowSize{});
        line = pty.slave_path().substr(std::string_view("/dev/").size());
        {
            UtmpRecord record(pty.master(), "caretz-doctor");
            registered = record.registered() && utmp_lists(line);
        }
        if (registered && utmp_lists(line))
            return problem("libutempter", "its helper recorded " + line +
                                              " in " _PATH_UTMP
                                              " but did not remove the record, so who and w would "
                                              "list sessions that ended; reinstall it with: "
                                              "apt-get install --reinstall libutempter0");
    } catch (const std::exception& e) {
        return problem("libutempter", std::string("no pseudo-terminal to try it on (") + e.what() +
                                          "); mount devpts at /dev/pts");
    }
    if (registered)
        return ok("libutempter", "a session's terminal is recorded in " _PATH_UTMP
                                 " while Caretz runs, so who and w list it (" +
                                     line + " was recorded and removed)");
    if (::access(_PATH_UTMP, F_OK) != 0)
        return ok("libutempter", "this system keeps no " _PATH_UTMP
                                 ", so there is nothing to "
                                 "record terminals in");
    return problem("libutempter", "its helper could not record a terminal in " _PATH_UTMP
                                  ", so who and w miss Caretz's sessions; reinstall it with: "
                                  "apt-get install --reinstall libutempter0");
}

DoctorCheck check_terminal(const UserContext& user) {
    auto term = user.env.find("TERM");
    if (term == user.env.end() || term->second.empty())
        return problem("terminal",
                       "TERM is not set, so programs cannot tell what the terminal "
                       "can do; set it to your terminal's type, such as "
                       "TERM=xterm-256color");
    if (!terminfo_knows(term->second))
        return problem("terminal", "TERM is \"" + term->second +
                                       "\", which the terminfo database does not know; install "
                                       "its entry (apt-get install ncurses-term) or set TERM to "
                                       "one it knows, such as xterm-256color");
    return ok("terminal", "TERM=" + term->second + " is in the terminfo database");
}

DoctorCheck check_model(const ModelSettings& settings) {
    if (auto why = ModelClient(settings).reachability_problem(kModelTimeout))
        return problem("model endpoint", *why);
    return ok("model endpoint", models_endpoint(settings) + " answered");
}

}  // namespace

std::string doctor_line(const DoctorCheck& check) {
    if (check.problem) return "problem  " + check.name + ": " + *check.problem;
    return "ok       " + check.name + ": " + check.detail;
}

int doctor_exit_status(const std::vector<DoctorCheck>& checks) {
    for (const auto& check : checks)
        if (check.problem) return 1;
    return 0;
}

std::string doctor_summary(const std::vector<DoctorCheck>& checks, long milliseconds) {
    size_t problems = 0;
    for (const auto& check : checks) problems += check.problem ? 1 : 0;
    std::string counts = problems == 0   ? "no problems"
                         : problems == 1 ? "1 problem"
                                         : std::to_string(problems) + " problems";
    return "caretz doctor: " + counts + " in " + std::to_string(checks.size()) + " checks (" +
           std::to_string(milliseconds) + " ms)";
}

int run_doctor(const CommandLine& cl) {
    const Clock::time_point start = Clock::now();
    const UserContext user = current_user_context();
    std::vector<DoctorCheck> checks;
    auto report = [&checks](DoctorCheck check) {
        std::printf("%s\n", doctor_line(check).c_str());
        std::fflush(stdout);
        checks.push_back(std::move(check));
    };

    // The model's answer and the session shell take the longest; they run meanwhile.
    ModelSettings model =
        resolve_model_settings(ModelFlags{cl.provider, cl.model, cl.base_url}, user.env);
    auto model_check = std::async(std::launch::async, check_model, model);
    report(check_bubblewrap());
    report(check_user_namespaces());
    Settings settings;
    report(check_config(cl, user, settings));
    report(check_shell(user));
    SandboxSpec spec = sandbox_spec_for(cl, settings, user);
    auto session_checks = std::async(std::launch::async, check_session, spec);
    report(check_audit_log(user));
    report(check_cache_layer(spec.policy, settings));
    report(check_session_bus(user));
    report(check_network_proxy(spec.policy));
    report(check_utmp());
    report(check_terminal(user));

    bool abandoned = false;
    if (session_checks.wait_until(start + kShellGiveUp) == std::future_status::ready) {
        auto [started, hooks] = session_checks.get();
        report(started);
        report(hooks);
    } else {
        abandoned = true;
        report(problem("shell start",
                       std::string(supported_shell_name(spec.shell)) +
                           " with your rc files showed no prompt in the sandbox within " +
                           std::to_string(kShellGiveUp.count()) +
                           " s; something in them waits (for input, or for the network); " +
                           slow_start_hint(supported_shell_name(spec.shell))));
        report(problem("hooks", "not tried (see above)"));
    }
    report(model_check.get());
    std::printf("%s\n", doctor_summary(checks, ms_since(start)).c_str());
    int status = doctor_exit_status(checks);
    std::fflush(stdout);
    // A session that hangs cannot be waited for; its sandbox dies with Caretz.
    if (abandoned) std::_Exit(status);
    return status;
}

}  // namespace caretz
