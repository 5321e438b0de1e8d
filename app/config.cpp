#include "app/config.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/duration.h"
#include "sandbox/network_policy.h"

namespace caretz {

using nlohmann::json;

namespace {

int line_at(const std::string& text, size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<int>(
                   std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

// Reads one layer's keys, reporting the file, the dotted key and its line on any mistake.
class LayerReader {
public:
    LayerReader(const std::string& text, const std::string& file, const ConfigContext& context)
        : text_(text), file_(file), context_(context) {}

    ConfigLayer read(const json& object, const std::vector<std::string>& where) {
        ConfigLayer layer;
        const std::string source = where.empty() ? file_ : file_ + ", profile " + where.back();
        for (const auto& [key, value] : object.items()) {
            auto path = where;
            path.push_back(key);
            if (key != "sandbox" && key != "profiles") layer.sources[key] = key + " in " + source;
            if (key == "ask_sandbox_off") {
                layer.ask_sandbox_off = boolean(value, path);
            } else if (key == "allow_docker") {
                layer.allow_docker = boolean(value, path);
            } else if (key == "permission_timeout") {
                layer.permission_timeout = duration(value, path);
            } else if (key == "notify") {
                layer.notify = notify_mode(value, path);
            } else if (key == "notify_command") {
                layer.notify_command = command(value, path);
            } else if (key == "sandbox") {
                read_sandbox(layer, object_of(value, path), path, source);
            } else if (key == "profiles" && where.empty()) {
                continue;  // read by parse_config
            } else {
                fail(path, "is not a known setting");
            }
        }
        return layer;
    }

    const json& object_of(const json& value, const std::vector<std::string>& path) {
        if (!value.is_object()) fail(path, "must be an object");
        return value;
    }

    [[noreturn]] void fail(const std::vector<std::string>& path, const std::string& problem) {
        std::string dotted;
        for (const auto& p : path) dotted += (dotted.empty() ? "" : ".") + p;
        throw ConfigError(file_ + ":" + std::to_string(line_of(path)) + ": \"" + dotted + "\" " +
                          problem);
    }

private:
    void read_sandbox(ConfigLayer& layer, const json& object, const std::vector<std::string>& where,
                      const std::string& source) {
        for (const auto& [key, value] : object.items()) {
            auto path = where;
            path.push_back(key);
            layer.sources["sandbox." + key] = "sandbox." + key + " in " + source;
            if (key == "writable") {
                layer.writable = strings(value, path);
            } else if (key == "hidden") {
                layer.hidden = strings(value, path);
            } else if (key == "visible") {
                layer.visible = visible_paths(value, path);
            } else if (key == "allowed_domains") {
                layer.allowed_domains = domains(value, path);
            } else if (key == "denied_domains") {
                layer.denied_domains = domains(value, path);
            } else if (key == "env") {
                layer.env = string_map(value, path);
            } else {
                fail(path, "is not a known sandbox setting");
            }
        }
    }

    bool boolean(const json& value, const std::vector<std::string>& path) {
        if (!value.is_boolean()) fail(path, "must be true or false");
        return value.get<bool>();
    }

    std::chrono::seconds duration(const json& value, const std::vector<std::string>& path) {
        std::optional<std::chrono::seconds> d;
        if (value.is_string()) d = parse_duration(value.get<std::string>());
        if (!d) fail(path, "must be a duration such as \"90s\", \"5m\" or \"1h\"");
        return *d;
    }

    NotifyMode notify_mode(const json& value, const std::vector<std::string>& path) {
        if (value.is_string()) {
            if (auto mode = parse_notify_mode(value.get<std::string>())) return *mode;
        }
        fail(path, "must be \"desktop\", \"bell\" or \"off\"");
    }

    // A program and its arguments, never a shell line: nothing in it is expanded.
    std::vector<std::string> command(const json& value, const std::vector<std::string>& path) {
        std::vector<std::string> argv;
        if (value.is_array()) argv = strings(value, path);
        if (argv.empty() || argv[0].empty())
            fail(path,
                 "must be a list: the program, then its arguments, such as "
                 "[\"notify-send\", \"Caretz\"]");
        return argv;
    }

    std::vector<std::string> strings(const json& value, const std::vector<std::string>& path) {
        if (!value.is_array()) fail(path, "must be a list of strings");
        std::vector<std::string> out;
        for (const auto& item : value) {
            if (!item.is_string()) fail(path, "must be a list of strings");
            out.push_back(item.get<std::string>());
        }
        return out;
    }

    // Host patterns for the network proxy; a pattern that cannot match anything (a URL, a
    // path) is a mistake worth stopping for, not a silently useless entry.
    std::vector<std::string> domains(const json& value, const std::vector<std::string>& path) {
        std::vector<std::string> out = strings(value, path);
        for (const auto& entry : out)
            if (!parse_domain_pattern(entry))
                fail(path, "has \"" + entry +
                               "\", which is not a host such as \"example.com\", "
                               "\"*.example.com\" or \"example.com:443\"");
        return out;
    }

    // Each entry must be a path hidden by default: a typo would otherwise leave the store
    // hidden with nothing said, and a path that is not hidden needs no entry.
    std::vector<std::string> visible_paths(const json& value,
                                           const std::vector<std::string>& path) {
        std::vector<std::string> out = strings(value, path);
        for (const auto& entry : out) {
            if (!entry.starts_with('/') && !entry.starts_with("~/"))
                fail(path, "has \"" + entry +
                               "\", which is not a path from / or ~/ (such as \"~/.kube\")");
            auto problem = visible_problem(absolute_path(entry, "/", context_.home),
                                           context_.hidden_defaults, context_.home);
            if (problem) fail(path, "has \"" + entry + "\", " + *problem);
        }
        return out;
    }

    std::map<std::string, std::string> string_map(const json& value,
                                                  const std::vector<std::string>& path) {
        if (!value.is_object()) fail(path, "must be an object of strings");
        std::map<std::string, std::string> out;
        for (const auto& [name, item] : value.items()) {
            if (!item.is_string()) fail(path, "must be an object of strings");
            out[name] = item.get<std::string>();
        }
        return out;
    }

    // The line of the last key of `path`, found by looking for each key in turn.
    int line_of(const std::vector<std::string>& path) const {
        size_t pos = 0;
        for (const auto& key : path) {
            size_t found = text_.find("\"" + key + "\"", pos);
            if (found == std::string::npos) break;
            pos = found;
        }
        return line_at(text_, pos);
    }

    const std::string& text_;
    const std::string& file_;
    const ConfigContext& context_;
};

void lay_over(ConfigLayer& below, const ConfigLayer& above) {
    if (above.ask_sandbox_off) below.ask_sandbox_off = above.ask_sandbox_off;
    if (above.permission_timeout) below.permission_timeout = above.permission_timeout;
    if (above.allow_docker) below.allow_docker = above.allow_docker;
    if (above.writable) below.writable = above.writable;
    if (above.hidden) below.hidden = above.hidden;
    if (above.visible) below.visible = above.visible;
    if (above.env) below.env = above.env;
    if (above.allowed_domains) below.allowed_domains = above.allowed_domains;
    if (above.denied_domains) below.denied_domains = above.denied_domains;
    if (above.notify) below.notify = above.notify;
    if (above.notify_command) below.notify_command = above.notify_command;
    for (const auto& [key, source] : above.sources) below.sources[key] = source;
}

std::map<std::string, ConfigLayer> builtin_profiles() {
    ConfigLayer ops;
    ops.ask_sandbox_off = true;
    ops.sources["ask_sandbox_off"] = "built-in profile ops";
    return {{"ops", ops}};
}

}  // namespace

ConfigFile parse_config(const std::string& text, const std::string& file_name,
                        const ConfigContext& context) {
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error& e) {
        std::string what = e.what();
        auto detail = what.find("syntax error");
        throw ConfigError(file_name + ":" +
                          std::to_string(line_at(text, e.byte > 0 ? e.byte - 1 : 0)) +
                          ": not valid JSON (" +
                          (detail == std::string::npos ? what : what.substr(detail)) + ")");
    } catch (const json::exception& e) {  // out_of_range: a number too large, e.g. 1E400
        throw ConfigError(file_name + ": not valid JSON (" + e.what() + ")");
    }
    LayerReader reader(text, file_name, context);
    ConfigFile config;
    config.base = reader.read(reader.object_of(root, {"(top level)"}), {});
    if (root.contains("profiles")) {
        const json& profiles = reader.object_of(root["profiles"], {"profiles"});
        for (const auto& [name, body] : profiles.items())
            config.profiles[name] =
                reader.read(reader.object_of(body, {"profiles", name}), {"profiles", name});
    }
    return config;
}

ConfigFile load_config(const std::string& path, bool required, const ConfigContext& context) {
    std::ifstream in(path);
    if (!in) {
        if (!required) return {};
        throw ConfigError(path + ": cannot read the config file");
    }
    std::stringstream text;
    text << in.rdbuf();
    return parse_config(text.str(), path, context);
}

std::string config_dir(const std::string& home) {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    std::string base = (xdg && xdg[0] == '/') ? xdg : home + "/.config";
    return base + "/caretz";
}

std::vector<std::string> profile_names(const ConfigFile& config) {
    std::set<std::string> names;
    for (const auto& [name, _] : builtin_profiles()) names.insert(name);
    for (const auto& [name, _] : config.profiles) names.insert(name);
    return {names.begin(), names.end()};
}

ConfigLayer find_profile(const ConfigFile& config, const std::string& name) {
    auto builtins = builtin_profiles();
    auto builtin = builtins.find(name);
    auto own = config.profiles.find(name);
    if (builtin == builtins.end() && own == config.profiles.end()) {
        std::string known;
        for (const auto& n : profile_names(config)) known += (known.empty() ? "" : ", ") + n;
        throw ConfigError("unknown profile \"" + name + "\" (known profiles: " + known + ")");
    }
    ConfigLayer layer = builtin == builtins.end() ? ConfigLayer{} : builtin->second;
    if (own != config.profiles.end()) lay_over(layer, own->second);
    return layer;
}

Settings merge_settings(const ConfigFile& config, const std::optional<ConfigLayer>& profile,
                        const ConfigLayer& flags) {
    ConfigLayer merged = config.base;
    if (profile) lay_over(merged, *profile);
    lay_over(merged, flags);
    Settings settings;
    settings.ask_sandbox_off = merged.ask_sandbox_off.value_or(false);
    settings.permission_timeout = merged.permission_timeout;
    settings.sandbox.allow_docker = merged.allow_docker.value_or(false);
    settings.sandbox.writable = merged.writable.value_or(std::vector<std::string>{});
    settings.sandbox.hidden = merged.hidden.value_or(std::vector<std::string>{});
    settings.sandbox.visible = merged.visible.value_or(std::vector<std::string>{});
    settings.sandbox.env = merged.env.value_or(std::map<std::string, std::string>{});
    settings.sandbox.allowed_domains = merged.allowed_domains.value_or(std::vector<std::string>{});
    settings.sandbox.denied_domains = merged.denied_domains.value_or(std::vector<std::string>{});
    settings.notice.mode = merged.notify.value_or(NotifyMode::desktop);
    settings.notice.command = merged.notify_command.value_or(std::vector<std::string>{});
    settings.sources = merged.sources;
    return settings;
}

}  // namespace caretz
