#include "app/settings_loader.h"

#include "app/machine_policy.h"

namespace caretz {

std::string config_path(const CommandLine& cl, const UserContext& user) {
    return cl.config_file ? *cl.config_file : config_dir(user.home) + "/config.json";
}

ConfigFile read_config(const CommandLine& cl, const UserContext& user) {
    ConfigContext context{user.home, default_hidden_paths(user.home, user.cwd, user.env)};
    return load_config(config_path(cl, user), cl.config_file.has_value(), context);
}

Settings load_settings(const CommandLine& cl, const UserContext& user) {
    ConfigContext context{user.home, default_hidden_paths(user.home, user.cwd, user.env)};
    const MachinePolicy policy = load_machine_policy(kMachinePolicyPath);
    const std::vector<ConfigFile> files = {load_machine_config(kMachineConfigPath, context),
                                           read_config(cl, user)};
    const auto layers = layers_in_force(files, cl.profile, cl.flags);
    check_within_policy(policy, layers, user.home, user.cwd);
    Settings settings = merge_settings(layers);
    apply_policy(policy, settings);
    return settings;
}

}  // namespace caretz
