#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "escalation/notify_mode.h"
#include "sandbox/hidden_defaults.h"
#include "sandbox/policy.h"

namespace caretz {

// A config file that cannot be used: the message names the file, the key and the line.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One layer of settings (the config file's top level, a profile, or the flags). Unset
// fields leave the layer below in force.
struct ConfigLayer {
    std::optional<bool> ask_sandbox_off;
    std::optional<std::chrono::seconds> permission_timeout;
    std::optional<bool> allow_docker;
    std::optional<std::vector<std::string>> writable;
    std::optional<std::vector<std::string>> hidden;
    // Gives back credential stores hidden by default. Only the user's own config file (and its
    // profiles) may set it: no flag does, and a layer from a workspace must never carry it.
    std::optional<std::vector<std::string>> visible;
    std::optional<std::map<std::string, std::string>> env;
    std::optional<std::vector<std::string>> allowed_domains;
    std::optional<std::vector<std::string>> denied_domains;
    std::optional<NotifyMode> notify;
    // Runs on the host at every question. Like `visible`, only the user's own config file (and
    // its profiles) may set it: no flag does, and a layer from a workspace must never carry it.
    std::optional<std::vector<std::string>> notify_command;
    // Who set each key of this layer, by its dotted name: "sandbox.hidden in FILE" (", profile
    // NAME"), "built-in profile ops" or the flag. Laid over with the values, so the merged
    // settings say where each value in force came from.
    std::map<std::string, std::string> sources;
};

struct ConfigFile {
    ConfigLayer base;
    std::map<std::string, ConfigLayer> profiles;
};

// The settings Caretz runs with once every layer is merged.
struct Settings {
    bool ask_sandbox_off = false;
    std::optional<std::chrono::seconds> permission_timeout;  // nullopt: wait forever
    PolicySettings sandbox;
    NoticeSettings notice;
    // Where each setting in force came from, by its dotted name; a key that is absent has its
    // default value.
    std::map<std::string, std::string> sources;
};

// What a config file is checked against: `sandbox.visible` may only name what is hidden by
// default for this user (with an empty list, it may name nothing).
struct ConfigContext {
    std::string home;
    std::vector<DefaultHiddenPath> hidden_defaults;
};

// Parses config JSON; `file_name` is only used in error messages.
ConfigFile parse_config(const std::string& text, const std::string& file_name,
                        const ConfigContext& context = {});

// Reads and parses a config file. A missing file is an empty config unless `required`.
ConfigFile load_config(const std::string& path, bool required, const ConfigContext& context = {});

// $XDG_CONFIG_HOME/caretz (default ~/.config/caretz).
std::string config_dir(const std::string& home);

// The profile named `name`: the config file's own, laid over the built-in one of that name
// (`ops` turns on ask_sandbox_off). Throws ConfigError naming the known profiles if neither
// exists.
ConfigLayer find_profile(const ConfigFile& config, const std::string& name);

// The names a --profile may give: the built-in profiles and the config file's own, sorted.
std::vector<std::string> profile_names(const ConfigFile& config);

// Flags beat the profile, the profile beats the config file, the config file beats defaults.
Settings merge_settings(const ConfigFile& config, const std::optional<ConfigLayer>& profile,
                        const ConfigLayer& flags);

}  // namespace caretz
