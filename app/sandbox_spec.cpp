#include "app/sandbox_spec.h"

#include <unistd.h>

namespace caretz {

namespace {

// Without a terminal, a wide window keeps programs from wrapping or cutting lines.
WindowSize output_size() {
    try {
        return window_size(STDOUT_FILENO);
    } catch (const std::exception&) {
        return WindowSize{40, 160};
    }
}

}  // namespace

SandboxSpec sandbox_spec_for(const CommandLine& cl, const Settings& settings,
                             const UserContext& user) {
    PolicySettings policy_settings = settings.sandbox;
    policy_settings.read_only = cl.plan;
    auto docker_host = user.env.find("DOCKER_HOST");
    SandboxSpec spec;
    spec.policy = make_policy(policy_settings, user.home, user.cwd, config_dir(user.home),
                              docker_host == user.env.end() ? "" : docker_host->second);
    spec.env = command_environment(user.env, spec.policy.env_overlay, api_key_variables(""));
    spec.shell = user.shell;
    spec.cwd = user.cwd;
    spec.size = output_size();
    return spec;
}

}  // namespace caretz
