#include "app/sandbox_spec.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "escalation/audit_log.h"
#include "sandbox/host_fs.h"
#include "sandbox/missing_git_paths.h"

namespace caretz {

namespace {

// Without a terminal, a wide window keeps programs from wrapping or cutting lines.
WindowSize output_size() {
    return terminal_size(STDOUT_FILENO).value_or(WindowSize{40, 160});
}

// The audit log and the session transcripts record every offer and its answer. Their folder is
// hidden by default (sandbox/hidden_defaults.cpp), and it must exist for the sandbox to hide it.
void create_state_dir(const std::string& home) {
    std::string state_dir = std::filesystem::path(AuditLog::default_path(home)).parent_path();
    std::error_code ignored;
    std::filesystem::create_directories(state_dir, ignored);
    std::filesystem::permissions(state_dir, std::filesystem::perms::owner_all, ignored);
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

}  // namespace

SandboxSpec sandbox_spec_for(const CommandLine& cl, const Settings& settings,
                             const UserContext& user) {
    PolicySettings policy_settings = settings.sandbox;
    policy_settings.read_only = cl.plan;
    create_state_dir(user.home);
    SandboxSpec spec;
    spec.policy = make_policy(policy_settings, user.home, user.cwd, user.env);
    spec.repositories = std::make_shared<RepositoryWatch>(
        spec.policy, git_global_configs(user.home, user.env), cl.mode != Mode::exec);
    for (const auto& note : spec.repositories->start_notes())
        std::fprintf(stderr, "%s\n", note.c_str());
    for (const auto& git_dir :
         create_missing_git_paths(spec.policy, RealHostFs(), create_empty_path))
        std::fprintf(stderr,
                     "caretz: cannot create the missing hooks or config of %s; the sandbox may "
                     "not write anywhere in it\n",
                     git_dir.c_str());
    spec.env = command_environment(user.env, spec.policy.env_overlay, api_key_variables(""));
    spec.shell = user.shell;
    // fish writes its universal variables next to its config and fails into every command's
    // output where it cannot; it gets a private copy of that folder instead.
    if (std::filesystem::path(user.shell).filename() == "fish") {
        auto xdg = user.env.find("XDG_CONFIG_HOME");
        std::string config_home =
            xdg != user.env.end() && !xdg->second.empty() ? xdg->second : user.home + "/.config";
        spec.policy.private_dirs.push_back(
            absolute_path(config_home + "/fish", user.cwd, user.home));
    }
    spec.cwd = user.cwd;
    spec.size = output_size();
    spec.exact_output = !::isatty(STDOUT_FILENO);
    return spec;
}

}  // namespace caretz
