// The config reader takes any bytes a user (or a broken editor) leaves in config.json. It
// either returns a config or throws ConfigError naming the file; any other exception, crash or
// sanitizer report is a bug. A config that parses also merges with every profile it names.

#include <string>

#include "app/config.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    ConfigFile config;
    try {
        config = parse_config(text, "fuzz.json");
    } catch (const ConfigError& e) {
        require(std::string(e.what()).starts_with("fuzz.json"),
                "a config error that does not name the file");
        return 0;
    }
    merge_settings(config, std::nullopt, {});
    for (const auto& [name, layer] : config.profiles) {
        (void)layer;
        merge_settings(config, find_profile(config, name), {});
    }
    merge_settings(config, find_profile(config, "ops"), {});
    return 0;
}
