#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "escalation/notify_mode.h"
#include "sandbox/policy.h"
#include "sandbox/protection/hidden_defaults.h"

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
    // "sandbox.cache_layer": false turns the private cache layer off (sandbox/cache_layer.h).
    std::optional<bool> cache_layer;
    std::optional<std::vector<std::string>> writable;
    std::optional<std::vector<std::string>> hidden;
    // Gives back credential stores hidden by default. Only the user's own config file (and its
    // profiles) may set it: no flag does, and a layer from a workspace must never carry it.
    std::optional<std::vector<std::string>> visible;
    std::optional<std::map<std::string, std::string>> env;
    std::optional<std::vector<std::string>> allowed_domains;
    std::optional<std::vector<std::string>> denied_domains;
    std::optional<NotifyMode> notify;
    // Runs on the host at every question. Like `visible`, only a config file the user or the
    // administrator wrote (and its profiles) may set it: no flag does, never a workspace.
    std::optional<std::vector<std::string>> notify_command;
    std::optional<bool> audit_syslog;
    // "model.context_window": the model's window in tokens, for servers Caretz cannot know.
    std::optional<long> context_window;
    // "sandbox.open_host_run": false, only in a machine policy: sandbox.writable may not open a
    // path of the table of what the host runs later, nor of the home's configuration.
    std::optional<bool> open_host_run;
    // Who set each key of this layer, by its dotted name: "sandbox.hidden in FILE" (", profile
    // NAME"), "built-in profile ops" or the flag. Laid over with the values, so the merged
    // settings say where each value in force came from.
    std::map<std::string, std::string> sources;
    // Standing rules: exact command texts that, once the sandbox refused them, rerun outside
    // without asking. Like `visible`, only a config file the user or the administrator wrote
    // sets them (no flag, never a workspace), and nothing of them is ever told to the model.
    std::optional<std::vector<std::string>> always_allow;
};

struct ConfigFile {
    std::string path;  // where it was read from; empty when there was no file
    ConfigLayer base;
    std::map<std::string, ConfigLayer> profiles;
};

// One layer in force and where it came from, as error messages name it.
struct SourcedLayer {
    std::string source;  // a file, `profile "NAME" in FILE`, `built-in profile "NAME"`, ...
    ConfigLayer layer;
    bool from_flags = false;
};

// The settings Caretz runs with once every layer is merged.
struct Settings {
    bool ask_sandbox_off = false;
    std::optional<std::chrono::seconds> permission_timeout;  // nullopt: wait forever
    PolicySettings sandbox;
    NoticeSettings notice;
    bool audit_syslog = false;  // each audit line also goes to syslog
    long context_window = 0;    // model.context_window; 0: not set
    std::vector<std::string> always_allow;
    // Where each setting in force came from, by its dotted name; a key that is absent has its
    // default value.
    std::map<std::string, std::string> sources;
};

// What set `key` of the merged settings (Settings::sources); "default" when nothing did.
std::string source_of(const Settings& settings, const std::string& key);

// The administrator's files. Fixed when Caretz is built: no variable or flag moves them, or a
// user could step around the policy by pointing Caretz elsewhere.
inline constexpr const char* kMachineConfigPath = "/etc/caretz/config.json";
inline constexpr const char* kMachinePolicyPath = "/etc/caretz/policy.json";

// What a config file is checked against: `sandbox.visible` may only name what is hidden by
// default for this user (with an empty list, it may name nothing).
struct ConfigContext {
    std::string home;
    std::vector<DefaultHiddenPath> hidden_defaults;
    // When not empty, the only keys the file may hold, dotted ("sandbox.hidden"): a policy's.
    std::vector<std::string> only_keys = {};
};

// Parses config JSON; `file_name` is only used in error messages.
ConfigFile parse_config(const std::string& text, const std::string& file_name,
                        const ConfigContext& context = {});

// Reads and parses a config file. A missing file is an empty config unless `required`.
ConfigFile load_config(const std::string& path, bool required, const ConfigContext& context = {});

// Reads the administrator's file at `path`: nullopt when there is none. The file and its
// folders must be root's and writable by nobody else (a world-writable folder only with the
// sticky bit), or a user could rewrite what binds them; otherwise, and when it cannot be read,
// throws ConfigError naming it.
std::optional<std::string> read_root_owned_file(const std::string& path);

// The machine-wide config (kMachineConfigPath); an empty one when there is none.
ConfigFile load_machine_config(const std::string& path, const ConfigContext& context);

// $XDG_CONFIG_HOME/caretz (default ~/.config/caretz).
std::string config_dir(const std::string& home);

// The layers in force, lowest first: each file's top level (`files` lowest first: the
// machine-wide config, then the user's), then the profile named `profile` (the built-in one of
// that name, `ops` turning on ask_sandbox_off, then each file's own), then the flags. Throws
// ConfigError naming the known profiles when no layer has that profile.
std::vector<SourcedLayer> layers_in_force(const std::vector<ConfigFile>& files,
                                          const std::optional<std::string>& profile,
                                          const ConfigLayer& flags);

// The names a --profile may give: the built-in profiles and the config file's own, sorted.
std::vector<std::string> profile_names(const ConfigFile& config);

// Each layer's keys replace those below it (a list as a whole); defaults fill the rest.
Settings merge_settings(const std::vector<SourcedLayer>& layers);

}  // namespace caretz
