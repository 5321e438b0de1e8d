// The config reader takes any bytes a user (or a broken editor) leaves in config.json. It
// either returns a config or throws ConfigError naming the file; any other exception, crash or
// sanitizer report is a bug. A config that parses also merges with every profile it names. The
// same bytes as a machine policy either parse or stop Caretz the same way, and a policy that
// parses is held against the config and laid over its settings.

#include <string>

#include "app/config.h"
#include "app/machine_policy.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    MachinePolicy policy;
    try {
        policy = parse_machine_policy(text, "policy.json");
    } catch (const ConfigError& e) {
        require(std::string(e.what()).starts_with("policy.json"),
                "a policy error that does not name the file");
    }
    ConfigFile config;
    try {
        config = parse_config(text, "fuzz.json");
    } catch (const ConfigError& e) {
        require(std::string(e.what()).starts_with("fuzz.json"),
                "a config error that does not name the file");
        return 0;
    }
    merge_settings(layers_in_force({config}, std::nullopt, {}));
    for (const auto& [name, layer] : config.profiles) {
        (void)layer;
        merge_settings(layers_in_force({config}, name, {}));
    }
    merge_settings(layers_in_force({config}, "ops", {}));
    try {
        const auto layers = layers_in_force({config}, std::nullopt, {});
        check_within_policy(policy, layers, "/home/u", "/home/u/work");
        Settings settings = merge_settings(layers);
        apply_policy(policy, settings);
    } catch (const ConfigError& e) {
        require(std::string(e.what()).find("policy.json") != std::string::npos,
                "a policy refusal that does not name the policy");
    }
    return 0;
}
