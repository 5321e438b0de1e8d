#include "app/machine_policy.h"

#include <algorithm>

#include "app/duration.h"
#include "sandbox/network/network_policy.h"
#include "sandbox/protection/host_run_paths.h"

namespace caretz {

namespace {

const std::vector<std::string> kPolicyKeys = {"ask_sandbox_off",         "allow_docker",
                                              "permission_timeout",      "audit.syslog",
                                              "sandbox.hidden",          "sandbox.denied_domains",
                                              "sandbox.allowed_domains", "sandbox.open_host_run"};

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

bool covered(const std::string& entry, const std::vector<std::string>& patterns) {
    auto inner = parse_domain_pattern(entry);
    return inner && std::any_of(patterns.begin(), patterns.end(), [&](const std::string& text) {
               auto outer = parse_domain_pattern(text);
               return outer && outer->covers(*inner);
           });
}

// One layer held against the policy; the first thing that goes past it stops Caretz.
class LayerCheck {
public:
    LayerCheck(const MachinePolicy& policy, const SourcedLayer& layer, const std::string& home,
               const std::string& workspace)
        : policy_(policy), layer_(layer), home_(home), workspace_(workspace) {}

    void run() {
        const ConfigLayer& l = layer_.layer;
        if (policy_.forbids_ask_sandbox_off && l.ask_sandbox_off.value_or(false))
            refuse("ask_sandbox_off", "is true", "turns \"ask_sandbox_off\" off");
        if (policy_.forbids_ask_sandbox_off && l.always_allow && !l.always_allow->empty())
            refuse("sandbox_off.always_allow", "lists commands",
                   "turns \"ask_sandbox_off\" off, so no command runs outside the sandbox");
        if (policy_.forbids_docker && l.allow_docker.value_or(false))
            refuse("allow_docker", "is true", "turns \"allow_docker\" off");
        if (policy_.requires_syslog && l.audit_syslog == false)
            refuse("audit.syslog", "is false", "turns \"audit.syslog\" on");
        if (policy_.max_permission_timeout && l.permission_timeout &&
            *l.permission_timeout > *policy_.max_permission_timeout)
            refuse("permission_timeout", "is " + format_duration(*l.permission_timeout),
                   "allows \"permission_timeout\" of at most " +
                       format_duration(*policy_.max_permission_timeout));
        check_paths("sandbox.writable", l.writable);
        if (policy_.forbids_opening_host_run && l.writable)
            for (const auto& entry : *l.writable)
                if (opens_host_run_path(absolute_path(entry, workspace_, home_), home_))
                    refuse("sandbox.writable", "has \"" + entry + "\"",
                           "keeps what the host runs later read-only (\"sandbox.open_host_run\": "
                           "false)");
        check_paths("sandbox.visible", l.visible);
        check_domains(l.allowed_domains);
    }

private:
    // A writable or visible path inside a path the policy hides would stay hidden anyway;
    // saying so beats a setting that silently does nothing.
    void check_paths(const std::string& key, const std::optional<std::vector<std::string>>& list) {
        if (!list) return;
        for (const auto& entry : *list) {
            const std::string path = absolute_path(entry, workspace_, home_);
            for (const auto& hidden : policy_.hidden)
                if (path_within(path, absolute_path(hidden, "/", home_)))
                    refuse(key, "has \"" + entry + "\"",
                           "hides " + hidden + " (\"sandbox.hidden\") from every sandbox");
        }
    }

    void check_domains(const std::optional<std::vector<std::string>>& list) {
        if (!list) return;
        for (const auto& entry : *list) {
            if (covered(entry, policy_.denied_domains))
                refuse("sandbox.allowed_domains", "has \"" + entry + "\"",
                       "denies it (\"sandbox.denied_domains\": " + joined(policy_.denied_domains) +
                           ")");
            if (policy_.allowed_domains && !covered(entry, *policy_.allowed_domains))
                refuse("sandbox.allowed_domains", "has \"" + entry + "\"",
                       "allows only destinations within \"sandbox.allowed_domains\": " +
                           (policy_.allowed_domains->empty() ? std::string("(none)")
                                                             : joined(*policy_.allowed_domains)));
        }
    }

    [[noreturn]] void refuse(const std::string& key, const std::string& what,
                             const std::string& rule) const {
        std::string who;
        if (!layer_.from_flags)
            who = layer_.source + ": \"" + key + "\" " + what + ", which";
        else if (key == "ask_sandbox_off")
            who = "--ask-sandbox-off";
        else if (key == "allow_docker")
            who = "--allow-docker";
        else
            who = "--permission-timeout " + what.substr(what.find(' ') + 1);
        throw ConfigError(who + " goes past the machine policy " + policy_.path + ": it " + rule +
                          " for everyone on this machine (ask its administrator)");
    }

    const MachinePolicy& policy_;
    const SourcedLayer& layer_;
    const std::string& home_;
    const std::string& workspace_;
};

void add_unique(std::vector<std::string>& list, const std::vector<std::string>& items) {
    for (const auto& item : items)
        if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

}  // namespace

MachinePolicy parse_machine_policy(const std::string& text, const std::string& path) {
    ConfigContext context;
    context.only_keys = kPolicyKeys;
    const ConfigLayer layer = parse_config(text, path, context).base;
    auto wrong = [&](const std::string& key, const std::string& problem) {
        return ConfigError(path + ": \"" + key + "\" " + problem);
    };
    MachinePolicy policy;
    policy.path = path;
    if (layer.ask_sandbox_off) {
        if (*layer.ask_sandbox_off)
            throw wrong("ask_sandbox_off",
                        "can only be false in a policy (leave it out to let users choose)");
        policy.forbids_ask_sandbox_off = true;
    }
    if (layer.allow_docker) {
        if (*layer.allow_docker)
            throw wrong("allow_docker",
                        "can only be false in a policy (leave it out to let users choose)");
        policy.forbids_docker = true;
    }
    if (layer.audit_syslog) {
        if (!*layer.audit_syslog)
            throw wrong("audit.syslog",
                        "can only be true in a policy (leave it out to let users choose)");
        policy.requires_syslog = true;
    }
    if (layer.open_host_run) {
        if (*layer.open_host_run)
            throw wrong("sandbox.open_host_run",
                        "can only be false in a policy (leave it out to let users choose)");
        policy.forbids_opening_host_run = true;
    }
    policy.max_permission_timeout = layer.permission_timeout;
    for (const auto& entry : layer.hidden.value_or(std::vector<std::string>{}))
        if (!entry.starts_with('/') && !entry.starts_with("~/"))
            throw wrong(
                "sandbox.hidden",
                "has \"" + entry + "\", which is not a path from / or ~/ (such as \"/srv\")");
    policy.hidden = layer.hidden.value_or(std::vector<std::string>{});
    policy.denied_domains = layer.denied_domains.value_or(std::vector<std::string>{});
    policy.allowed_domains = layer.allowed_domains;
    return policy;
}

MachinePolicy load_machine_policy(const std::string& path) {
    auto text = read_root_owned_file(path);
    return text ? parse_machine_policy(*text, path) : MachinePolicy{};
}

void check_within_policy(const MachinePolicy& policy, const std::vector<SourcedLayer>& layers,
                         const std::string& home, const std::string& workspace) {
    if (policy.path.empty()) return;
    for (const auto& layer : layers) LayerCheck(policy, layer, home, workspace).run();
}

void apply_policy(const MachinePolicy& policy, Settings& settings) {
    if (policy.path.empty()) return;
    if (policy.forbids_ask_sandbox_off) settings.ask_sandbox_off = false;
    if (policy.forbids_docker) settings.sandbox.allow_docker = false;
    if (policy.requires_syslog) settings.audit_syslog = true;
    if (policy.max_permission_timeout)
        settings.permission_timeout =
            std::min(settings.permission_timeout.value_or(*policy.max_permission_timeout),
                     *policy.max_permission_timeout);
    add_unique(settings.sandbox.hidden, policy.hidden);
    add_unique(settings.sandbox.denied_domains, policy.denied_domains);
    settings.sandbox.domain_bound = policy.allowed_domains;
}

}  // namespace caretz
