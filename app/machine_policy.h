#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "app/config.h"

namespace caretz {

// What an administrator enforces on every run of Caretz on the machine (kMachinePolicyPath).
// Nothing a user sets (a config file, a profile, a flag) can go past it: an attempt is an
// error naming the key and the policy file, never a silent change.
struct MachinePolicy {
    std::string path;                      // empty: no policy
    bool forbids_ask_sandbox_off = false;  // "ask_sandbox_off": false
    bool forbids_docker = false;           // "allow_docker": false
    bool requires_syslog = false;          // "audit": {"syslog": true}
    std::optional<std::chrono::seconds> max_permission_timeout;
    std::vector<std::string> hidden;          // always hidden, on top of every other list
    std::vector<std::string> denied_domains;  // always denied, on top of every other list
    // The most sandbox.allowed_domains may list, and the most the network approval may let
    // through; nullopt: no bound.
    std::optional<std::vector<std::string>> allowed_domains;
    // "sandbox": {"open_host_run": false}: sandbox.writable may not name a path of the table of
    // what the host runs later or of the home's configuration, nor a path in one
    // (sandbox/protection/host_run_paths.h: opens_host_run_path()).
    bool forbids_opening_host_run = false;
};

// Parses a policy; anything but the keys above, or a value that would not restrict (such as
// "allow_docker": true), is an error naming the key, since a policy that does not say what the
// administrator meant must stop Caretz rather than bind nothing.
MachinePolicy parse_machine_policy(const std::string& text, const std::string& path);

// Reads the policy at `path` (see read_root_owned_file): no policy when there is no file.
MachinePolicy load_machine_policy(const std::string& path);

// Throws ConfigError at the first layer that goes past the policy, naming the layer, the key
// and the policy file. Paths resolve against `home` and `workspace`.
void check_within_policy(const MachinePolicy& policy, const std::vector<SourcedLayer>& layers,
                         const std::string& home, const std::string& workspace);

// Lays the policy over merged settings: what it forces, what it adds, and the bound the network
// approval keeps to.
void apply_policy(const MachinePolicy& policy, Settings& settings);

}  // namespace caretz
