#include "app/sandbox_spec.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "escalation/audit_log.h"
#include "escalation/credential_fallbacks.h"
#include "sandbox/host_fs.h"
#include "sandbox/missing_git_paths.h"
#include "sandbox/nested_repositories.h"

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

}  // namespace

SandboxSpec sandbox_spec_for(const CommandLine& cl, const Settings& settings,
                             const UserContext& user) {
    PolicySettings policy_settings = settings.sandbox;
    policy_settings.read_only = cl.plan;
    create_state_dir(user.home);
    SandboxSpec spec;
    spec.policy = make_policy(policy_settings, user.home, user.cwd, user.env);
    if (!protect_nested_repositories(spec.policy, RealHostFs()))
        std::fprintf(stderr,
                     "caretz: the writable folders are too large to search through for git "
                     "repositories; hooks of repositories deep inside them are not protected\n");
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
    spec.watched_programs = programs_to_watch();
    return spec;
}

}  // namespace caretz
