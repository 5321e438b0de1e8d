#include "app/settings_loader.h"

namespace caretz {

std::string config_path(const CommandLine& cl, const UserContext& user) {
    return cl.config_file ? *cl.config_file : config_dir(user.home) + "/config.json";
}

ConfigFile read_config(const CommandLine& cl, const UserContext& user) {
    ConfigContext context{user.home, default_hidden_paths(user.home, user.cwd, user.env)};
    return load_config(config_path(cl, user), cl.config_file.has_value(), context);
}

Settings load_settings(const CommandLine& cl, const UserContext& user) {
    ConfigFile config = read_config(cl, user);
    std::optional<ConfigLayer> profile;
    if (cl.profile) profile = find_profile(config, *cl.profile);
    return merge_settings(config, profile, cl.flags);
}

}  // namespace caretz
