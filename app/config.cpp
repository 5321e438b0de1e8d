#include "app/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/duration.h"
#include "pty/unique_fd.h"
#include "sandbox/network/network_policy.h"

namespace caretz {

namespace fs = std::filesystem;
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
        layer_ = &layer;
        where_ = where;
        source_ = where.empty() ? file_ : file_ + ", profile " + where.back();
        each_key(
            object, where, "setting", [&](const std::string& key, const json& value, auto& path) {
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
                    read_sandbox(layer, object_of(value, path), path);
                } else if (key == "audit") {
                    each_key(object_of(value, path), path, "audit setting",
                             [&](const std::string& k, const json& v, auto& p) {
                                 if (k != "syslog") return false;
                                 layer.audit_syslog = boolean(v, p);
                                 return true;
                             });
                } else if (key == "model") {
                    each_key(object_of(value, path), path, "model setting",
                             [&](const std::string& k, const json& v, auto& p) {
                                 if (k != "context_window") return false;
                                 layer.context_window = positive_count(v, p);
                                 return true;
                             });
                } else if (key == "sandbox_off") {
                    each_key(object_of(value, path), path, "sandbox_off setting",
                             [&](const std::string& k, const json& v, auto& p) {
                                 if (k != "always_allow") return false;
                                 layer.always_allow = strings(v, p);
                                 return true;
                             });
                } else {
                    return key == "profiles" && where.empty();  // profiles: read by parse_config
                }
                return true;
            });
        return layer;
    }

    const json& object_of(const json& value, const std::vector<std::string>& path) {
        if (!value.is_object()) fail(path, "must be an object");
        return value;
    }

    [[noreturn]] void fail(const std::vector<std::string>& path, const std::string& problem) {
        throw ConfigError(file_ + ":" + std::to_string(line_of(path)) + ": \"" + dotted(path) +
                          "\" " + problem);
    }

    // A key outside `only_keys` (and not an object holding one) stops Caretz.
    void check_permitted(const std::vector<std::string>& path) {
        const auto& only = context_.only_keys;
        if (only.empty()) return;
        const std::string key = dotted(path);
        for (const auto& k : only)
            if (k == key || k.starts_with(key + ".")) return;
        std::string list;
        for (const auto& k : only) list += (list.empty() ? "" : ", ") + k;
        fail(path, "cannot be set here (this file may set: " + list + ")");
    }

private:
    static std::string dotted(const std::vector<std::string>& path) {
        std::string out;
        for (const auto& p : path) out += (out.empty() ? "" : ".") + p;
        return out;
    }

    // Hands `read` each key of `object` with its path; a key it does not know (it returns
    // false) stops Caretz, as does one outside `only_keys`.
    template <typename Read>
    void each_key(const json& object, const std::vector<std::string>& where, const char* what,
                  Read read) {
        for (const auto& [key, value] : object.items()) {
            auto path = where;
            path.push_back(key);
            check_permitted(path);
            if (!read(key, value, path)) fail(path, std::string("is not a known ") + what);
            note_source(path, value);
        }
    }

    // Records who set a setting (not a group of them such as "sandbox"), by its dotted name
    // within the layer: "sandbox.hidden in FILE, profile NAME".
    void note_source(const std::vector<std::string>& path, const json& value) {
        if (value.is_object() && path.back() != "env") return;
        const std::string key = dotted(
            std::vector<std::string>(path.begin() + static_cast<long>(where_.size()), path.end()));
        layer_->sources[key] = key + " in " + source_;
    }

    void read_sandbox(ConfigLayer& layer, const json& object,
                      const std::vector<std::string>& where) {
        each_key(object, where, "sandbox setting",
                 [&](const std::string& key, const json& value, auto& path) {
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
                     } else if (key == "cache_layer") {
                         layer.cache_layer = boolean(value, path);
                     } else if (key == "open_host_run") {
                         // Only a policy's: in a user's config it would bind nothing.
                         if (context_.only_keys.empty())
                             fail(path, std::string("can only be set in the machine policy (") +
                                            kMachineConfigPath + ")");
                         layer.open_host_run = boolean(value, path);
                     } else {
                         return false;
                     }
                     return true;
                 });
    }

    long positive_count(const json& value, const std::vector<std::string>& path) {
        if (!value.is_number_integer() || value.get<long>() <= 0)
            fail(path, "must be a whole number of tokens above 0, such as 131072");
        return value.get<long>();
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
    ConfigLayer* layer_ = nullptr;  // the layer `read` fills, for note_source
    std::vector<std::string> where_;
    std::string source_;
};

void lay_over(ConfigLayer& below, const ConfigLayer& above) {
    if (above.ask_sandbox_off) below.ask_sandbox_off = above.ask_sandbox_off;
    if (above.permission_timeout) below.permission_timeout = above.permission_timeout;
    if (above.allow_docker) below.allow_docker = above.allow_docker;
    if (above.cache_layer) below.cache_layer = above.cache_layer;
    if (above.writable) below.writable = above.writable;
    if (above.hidden) below.hidden = above.hidden;
    if (above.visible) below.visible = above.visible;
    if (above.env) below.env = above.env;
    if (above.allowed_domains) below.allowed_domains = above.allowed_domains;
    if (above.denied_domains) below.denied_domains = above.denied_domains;
    if (above.notify) below.notify = above.notify;
    if (above.notify_command) below.notify_command = above.notify_command;
    if (above.audit_syslog) below.audit_syslog = above.audit_syslog;
    if (above.context_window) below.context_window = above.context_window;
    if (above.always_allow) below.always_allow = above.always_allow;
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
    config.path = file_name;
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

std::optional<std::string> read_root_owned_file(const std::string& path) {
    // Not following a link and not waiting on a FIFO: only a regular file is read.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) {
        if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
        if (errno == ELOOP)
            throw ConfigError(path +
                              ": is a symbolic link; Caretz reads it only as a regular "
                              "file owned by root");
        throw ConfigError(path + ": cannot be read (" + std::strerror(errno) +
                          "), so Caretz does not start; make it readable (chmod 644)");
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw ConfigError(path + ": is not a regular file; Caretz does not start without it");
    auto fix = [](const std::string& p, const char* mode) {
        return "; make it root's: chown root:root " + p + " && chmod " + mode + " " + p;
    };
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
        throw ConfigError(path +
                          ": users other than root may change it, so Caretz does not "
                          "trust it and does not start" +
                          fix(path, "644"));
    for (auto dir = fs::path(path).parent_path(); !dir.empty(); dir = dir.parent_path()) {
        struct stat d {};
        const bool sticky_or_closed =
            ::stat(dir.c_str(), &d) == 0 &&
            ((d.st_mode & (S_IWGRP | S_IWOTH)) == 0 || (d.st_mode & S_ISVTX));
        if (!S_ISDIR(d.st_mode) || d.st_uid != 0 || !sticky_or_closed)
            throw ConfigError(path + ": its folder " + dir.string() +
                              " may be changed by users other than root, so Caretz does not "
                              "trust the file and does not start" +
                              fix(dir.string(), "755"));
        if (dir == dir.root_path()) break;
    }
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            throw ConfigError(path + ": cannot be read (" + std::string(std::strerror(errno)) +
                              ")");
        text.append(buf, static_cast<size_t>(n));
    }
    return text;
}

ConfigFile load_machine_config(const std::string& path, const ConfigContext& context) {
    auto text = read_root_owned_file(path);
    return text ? parse_config(*text, path, context) : ConfigFile{};
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

std::vector<SourcedLayer> layers_in_force(const std::vector<ConfigFile>& files,
                                          const std::optional<std::string>& profile,
                                          const ConfigLayer& flags) {
    std::vector<SourcedLayer> layers;
    for (const auto& file : files)
        if (!file.path.empty()) layers.push_back({file.path, file.base});
    if (profile) {
        const auto builtins = builtin_profiles();
        bool found = false;
        if (auto builtin = builtins.find(*profile); builtin != builtins.end()) {
            layers.push_back({"built-in profile \"" + *profile + "\"", builtin->second});
            found = true;
        }
        for (const auto& file : files)
            if (auto own = file.profiles.find(*profile); own != file.profiles.end()) {
                layers.push_back({"profile \"" + *profile + "\" in " + file.path, own->second});
                found = true;
            }
        if (!found) {
            std::set<std::string> known;
            for (const auto& [name, _] : builtins) known.insert(name);
            for (const auto& file : files)
                for (const auto& [name, _] : file.profiles) known.insert(name);
            std::string list;
            for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
            throw ConfigError("unknown profile \"" + *profile + "\" (known profiles: " + list +
                              ")");
        }
    }
    layers.push_back({"the command line", flags, true});
    return layers;
}

std::string source_of(const Settings& settings, const std::string& key) {
    auto it = settings.sources.find(key);
    return it == settings.sources.end() ? "default" : it->second;
}

Settings merge_settings(const std::vector<SourcedLayer>& layers) {
    ConfigLayer merged;
    for (const auto& layer : layers) lay_over(merged, layer.layer);
    Settings settings;
    settings.ask_sandbox_off = merged.ask_sandbox_off.value_or(false);
    settings.permission_timeout = merged.permission_timeout;
    settings.sandbox.allow_docker = merged.allow_docker.value_or(false);
    settings.sandbox.cache_layer = merged.cache_layer.value_or(true);
    settings.sandbox.writable = merged.writable.value_or(std::vector<std::string>{});
    settings.sandbox.hidden = merged.hidden.value_or(std::vector<std::string>{});
    settings.sandbox.visible = merged.visible.value_or(std::vector<std::string>{});
    settings.sandbox.env = merged.env.value_or(std::map<std::string, std::string>{});
    settings.sandbox.allowed_domains = merged.allowed_domains.value_or(std::vector<std::string>{});
    settings.sandbox.denied_domains = merged.denied_domains.value_or(std::vector<std::string>{});
    settings.notice.mode = merged.notify.value_or(NotifyMode::desktop);
    settings.notice.command = merged.notify_command.value_or(std::vector<std::string>{});
    settings.sources = merged.sources;
    settings.audit_syslog = merged.audit_syslog.value_or(false);
    settings.context_window = merged.context_window.value_or(0);
    settings.always_allow = merged.always_allow.value_or(std::vector<std::string>{});
    return settings;
}

}  // namespace caretz
