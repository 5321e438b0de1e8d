#include "app/sandbox_spec.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "escalation/audit_log.h"
#include "escalation/credential_fallbacks.h"
#include "pty/terminal.h"
#include "sandbox/host_fs.h"
#include "sandbox/network/network_forwarder.h"
#include "sandbox/phase_times.h"
#include "sandbox/protection/host_run_paths.h"
#include "sandbox/protection/missing_git_paths.h"

namespace caretz {

namespace {

// Without a terminal, a wide window keeps programs from wrapping or cutting lines.
WindowSize output_size() {
    return terminal_size(STDOUT_FILENO).value_or(WindowSize{40, 160});
}

// Caretz's state folder: the audit log and the session transcripts record every offer and its
// answer, and the record of the last search for repositories is kept there. The folder is
// hidden always (sandbox/protection/hidden_defaults.cpp), and it must exist for the sandbox to hide
// it.
std::string state_dir_of(const std::string& home) {
    return std::filesystem::path(AuditLog::default_path(home)).parent_path();
}

std::string create_state_dir(const std::string& home) {
    std::string state_dir = state_dir_of(home);
    make_private_folder(state_dir);
    return state_dir;
}

// Where git reads the user's own config (git-config(1), FILES): $GIT_CONFIG_GLOBAL instead of
// both when set.
std::vector<std::string> git_global_configs(const std::string& home, const Environment& env) {
    auto global = env.find("GIT_CONFIG_GLOBAL");
    if (global != env.end() && !global->second.empty())
        return {absolute_path(global->second, home, home)};
    auto xdg = env.find("XDG_CONFIG_HOME");
    std::string config_home =
        xdg != env.end() && !xdg->second.empty() ? xdg->second : home + "/.config";
    return {home + "/.gitconfig", absolute_path(config_home + "/git/config", home, home)};
}

// Caretz reads no config from a workspace. A file where one would be is likely someone's
// attempt at one (standing rules, sandbox settings): saying so beats silently doing without.
void note_ignored_workspace_config(const std::string& workspace, std::vector<std::string>& notes) {
    const std::string path = workspace + "/.caretz/config.json";
    std::error_code ignored;
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, ignored))) return;
    notes.push_back("caretz: " + path +
                    " is not read: Caretz takes no settings from a workspace, so standing rules "
                    "(sandbox_off.always_allow) and sandbox settings come only from your own "
                    "config and " +
                    kMachineConfigPath);
}

// The private cache layer of the policy's workspace (sandbox/cache_layer.h), unless
// sandbox.cache_layer turns it off. Whether an overlay can be had is probed on Caretz's state
// folder, where the store lies, or before that folder is made, on the folder it will be made
// in ($XDG_STATE_HOME may lie on another file system than the home).
CacheLayer cache_layer_for(const SandboxPolicy& policy, const PolicySettings& settings,
                           const UserContext& user) {
    if (!settings.cache_layer) return {};
    const std::string state_dir = state_dir_of(user.home);
    const std::string probed = deepest_existing(RealHostFs(), state_dir);
    return plan_cache_layer(policy, RealHostFs(), user.env, workspace_cache_store(user),
                            overlay_unavailable_reason(probed, probed == state_dir));
}

// The policy the settings and flags make, before the search for repositories.
SandboxPolicy settings_policy(const CommandLine& cl, const Settings& settings,
                              const UserContext& user) {
    PolicySettings policy_settings = settings.sandbox;
    policy_settings.read_only = cl.plan;
    SandboxPolicy policy = make_policy(policy_settings, user.home, user.cwd, user.env);
    protect_home_configuration(policy, RealHostFs());
    policy.cache_layer = cache_layer_for(policy, policy_settings, user);
    return policy;
}

// A writable root that opens a tool's cache lets a sandboxed command put there what the host
// runs later (a crate's build.rs, a `.pth` in a Python environment): the layer would have
// kept those writes to the sandbox.
void note_opened_caches(const SandboxPolicy& policy, const UserContext& user,
                        std::vector<std::string>& notes) {
    for (const auto& root : policy.writable) {
        if (root == policy.workspace) continue;
        const std::string cache = cache_opened_by(root, user.home, user.env);
        if (cache.empty()) continue;
        const std::string what = cache == root ? root : root + ", which holds " + cache;
        notes.push_back("caretz: sandbox.writable opens " + what +
                        ", a cache your tools run from on the host: what a sandboxed command "
                        "puts there runs outside the sandbox later. Without it, the private "
                        "cache layer gives sandboxed commands a writable cache of their own");
    }
}

// Takes the layer's store for this process (CacheStoreUse) and makes its folders; a layer
// that cannot be had is off, with a note saying why.
void use_cache_store(SandboxSpec& spec, std::vector<std::string>& notes) {
    CacheLayer& layer = spec.policy.cache_layer;
    if (layer.how == CacheLayer::How::none) return;
    std::string problem;
    auto use = CacheStoreUse::take(layer.store, problem);
    if (use && !use->owns_upper()) layer.upper = "upper." + std::to_string(::getpid());
    if (use) problem = make_cache_store(layer);
    if (!problem.empty()) {
        notes.push_back("caretz: the private cache layer is off: " + problem);
        layer = {};
        return;
    }
    spec.cache_store_use = std::make_shared<const CacheStoreUse>(std::move(*use));
}

}  // namespace

std::string workspace_cache_store(const UserContext& user) {
    return cache_store(state_dir_of(user.home), absolute_path(user.cwd, "/", user.home));
}

SandboxPolicy effective_policy(const CommandLine& cl, const Settings& settings,
                               const UserContext& user) {
    SandboxPolicy policy = settings_policy(cl, settings, user);
    // The same search a sandbox starts with, without a watch: its protected paths.
    const ToolTrust trust = ToolTrust::of_user(RealHostFs(), user.home, user.env);
    RepositoryWatch search(policy, git_global_configs(user.home, user.env), trust,
                           RepositoryWatch::Watching::none, state_dir_of(user.home));
    protect_host_run_paths(policy, RealHostFs(), user.env, search.work_trees(),
                           search.run_entries(), trust);
    return policy;
}

SandboxSpec sandbox_spec_for(const CommandLine& cl, const Settings& settings,
                             const UserContext& user) {
    std::vector<std::string> notes;
    SandboxSpec spec = sandbox_spec_for(cl, settings, user, notes);
    for (const auto& note : notes) std::fprintf(stderr, "%s\n", note.c_str());
    return spec;
}

SandboxSpec sandbox_spec_for(const CommandLine& cl, const Settings& settings,
                             const UserContext& user, std::vector<std::string>& notes) {
    const std::string state_dir = create_state_dir(user.home);
    note_ignored_workspace_config(user.cwd, notes);
    SandboxSpec spec;
    spec.policy = settings_policy(cl, settings, user);
    note_opened_caches(spec.policy, user, notes);
    use_cache_store(spec, notes);
    phase_done("policy");
    // A one-shot `caretz exec` watches nothing unless an offer can follow, which shows what
    // the sandboxed attempt changed, and then only a tree of few folders.
    using Watching = RepositoryWatch::Watching;
    const bool exec = cl.mode == Mode::exec;
    const Watching watching = settings.ask_sandbox_off
                                  ? (exec ? Watching::changes_if_few : Watching::changes)
                              : exec ? Watching::none
                                     : Watching::repositories;
    const ToolTrust trust = ToolTrust::of_user(RealHostFs(), user.home, user.env);
    spec.repositories = std::make_shared<RepositoryWatch>(
        spec.policy, git_global_configs(user.home, user.env), trust, watching, state_dir);
    const std::vector<std::string>& searched = spec.repositories->start_notes();
    notes.insert(notes.end(), searched.begin(), searched.end());
    phase_done("repository search");
    for (const auto& git_dir :
         create_missing_git_paths(spec.policy, RealHostFs(), create_empty_path))
        notes.push_back("caretz: cannot create the missing hooks or config of " + git_dir +
                        "; the sandbox may not write anywhere in it");
    protect_host_run_paths(spec.policy, RealHostFs(), user.env, spec.repositories->work_trees(),
                           spec.repositories->run_entries(), trust);
    if (!spec.policy.read_only && path_within(user.home, spec.policy.workspace))
        notes.push_back(
            "caretz: the workspace is your whole home folder; its configuration (every "
            "entry whose name starts with a dot) stays read-only and no new one can be made, "
            "while your own files and folders stay writable (a new one at the home's top is "
            "refused, and offered): caretz sandbox show lists it");
    spec.env = command_environment(user.env, spec.policy.env_overlay, api_key_variables(""));
    spec.shell = user.shell;
    // fish writes its universal variables next to its config and fails into every command's
    // output where it cannot; it gets a private folder there instead, whose config stays as
    // read-only as the rest of the home.
    if (std::filesystem::path(user.shell).filename() == "fish") {
        auto xdg = user.env.find("XDG_CONFIG_HOME");
        std::string config_home =
            xdg != user.env.end() && !xdg->second.empty() ? xdg->second : user.home + "/.config";
        spec.policy.private_dirs.push_back(
            {absolute_path(config_home + "/fish", user.cwd, user.home),
             {"fish_variables"},
             {"config.fish", "conf.d", "functions", "completions"}});
    }
    spec.cwd = user.cwd;
    spec.size = output_size();
    // The session's PTY turns '\n' into "\r\n" only when Caretz owns the terminal it copies
    // to (stdin and stdout terminals, not --print) and can turn that one's own processing off
    // meanwhile; otherwise the terminal or file downstream gets the bytes as written.
    spec.exact_output = cl.print || !Terminal::standard_is_terminal();
    spec.watched_programs = programs_to_watch();
    phase_done("spec");
    return spec;
}

namespace {

// `path` (absolute) is one of `configured` (as written in a config file) once resolved.
bool configured_path(const std::vector<std::string>& configured, const std::string& path,
                     const SandboxPolicy& policy) {
    return std::any_of(configured.begin(), configured.end(), [&](const std::string& entry) {
        return absolute_path(entry, policy.workspace, policy.home) == path;
    });
}

std::vector<SourcedValue> sourced(const std::vector<std::string>& values,
                                  const std::string& source) {
    std::vector<SourcedValue> out;
    for (const auto& v : values) out.push_back({v, source});
    return out;
}

std::string on_off(bool on) {
    return on ? "on" : "off";
}

// The store's size is measured for `caretz sandbox show` only: a large cache takes a while to
// walk, which a session's start should not wait for.
void report_cache_layer(const SandboxPolicy& policy, const Settings& settings, bool measure,
                        SandboxReport& r) {
    const CacheLayer& layer = policy.cache_layer;
    switch (layer.how) {
        case CacheLayer::How::none:
            r.cache_layer = policy.read_only
                                ? SourcedValue{"off (plan mode)", "--plan"}
                                : SourcedValue{
                                      "off: the caches are read-only like the rest of the home's "
                                      "configuration",
                                      source_of(settings, "sandbox.cache_layer")};
            return;
        case CacheLayer::How::overlay:
            r.cache_layer = {"overlay: the host's caches below, the sandbox's writes in the store",
                             "built in"};
            break;
        case CacheLayer::How::variables:
            r.cache_layer = {
                "tools' cache variables point at the store, since no overlay can be "
                "had: " +
                    layer.without_overlay,
                "built in"};
            break;
    }
    r.cache_store = layer.store;
    if (measure) r.cache_size = cache_store_size(layer.store);
    for (const auto& folder : layer.folders)
        r.caches.push_back({folder, "built in: seen with what the host's cache holds"});
    for (const auto& folder : layer.missing)
        r.caches.push_back({folder, "built in: missing on the host, a link to the store"});
    for (const auto& [name, value] : layer.variables)
        r.caches.push_back({name + "=" + value, "built in: a private folder of the store"});
}

}  // namespace

SandboxReport sandbox_report_for(const CommandLine& cl, const Settings& settings,
                                 const UserContext& user, const SandboxPolicy& policy) {
    SandboxReport r;
    r.workspace = policy.workspace;
    r.profile = {cl.profile.value_or(""), cl.profile ? "--profile" : "default"};
    r.plan_mode = cl.plan;
    r.plan_mode_source = cl.plan ? "--plan" : "default";
    r.allow_docker = {on_off(policy.allow_docker), source_of(settings, "allow_docker")};
    r.ask_sandbox_off = {on_off(settings.ask_sandbox_off), source_of(settings, "ask_sandbox_off")};
    r.permission_timeout = {settings.permission_timeout
                                ? std::to_string(settings.permission_timeout->count()) + "s"
                                : "",
                            source_of(settings, "permission_timeout")};
    r.notify = {std::string(to_string(settings.notice.mode)), source_of(settings, "notify")};

    r.writable.push_back({kPrivateTmp, "built in: private to the sandbox"});
    for (const auto& root : policy.writable)
        r.writable.push_back({root, root == policy.workspace
                                        ? "built in: the folder Caretz started in"
                                        : source_of(settings, "sandbox.writable")});
    auto host_run = [&](const std::string& path) {
        return std::find_if(policy.host_run.begin(), policy.host_run.end(),
                            [&](const HostRunPath& p) { return p.path == path; });
    };
    for (const auto& p : policy.protected_paths)
        if (host_run(p) == policy.host_run.end())
            r.read_only.push_back({p, p.ends_with("/.caretz")
                                          ? "built in: Caretz's own config in a workspace"
                                          : "built in: a repository's hooks and config"});
    for (const auto& p : policy.host_run) {
        std::string protection = describe(p.how);
        if (p.how == HostRunPath::How::sealed)
            protection += ": nothing can be made at the top of " + p.folder;
        if (p.how == HostRunPath::How::inside) protection += " in " + p.folder;
        r.host_run.push_back({p.path, protection,
                              p.how == HostRunPath::How::opened
                                  ? source_of(settings, "sandbox.writable")
                                  : "built in: " + p.reason});
    }
    for (const auto& s : policy.sealed) r.sealed.push_back({s, "built in"});
    for (const auto& h : policy.hidden)
        r.hidden.push_back({h, configured_path(settings.sandbox.hidden, h, policy)
                                   ? source_of(settings, "sandbox.hidden")
                                   : "built in"});
    r.visible = sourced(settings.sandbox.visible, source_of(settings, "sandbox.visible"));
    report_cache_layer(policy, settings, cl.mode == Mode::sandbox_show, r);

    for (const auto& [name, value] : policy.env_overlay)
        r.env_added.push_back({name + "=" + value, source_of(settings, "sandbox.env")});
    for (const auto& [name, value] : with_proxy_environment({}))
        r.env_added.push_back({name + "=" + value, "built in: the network proxy"});
    for (const auto& name : api_key_variables(""))
        r.env_removed.push_back({name, user.env.count(name)
                                           ? "built in: Caretz's API keys"
                                           : "built in: Caretz's API keys (not set now)"});
    r.allowed_domains =
        sourced(policy.allowed_domains, source_of(settings, "sandbox.allowed_domains"));
    r.denied_domains =
        sourced(policy.denied_domains, source_of(settings, "sandbox.denied_domains"));
    return r;
}

}  // namespace caretz
