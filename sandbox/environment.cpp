#include "sandbox/environment.h"

#include <unistd.h>

namespace caretz {

std::vector<std::string> api_key_variables(const std::string& provider_key_variable) {
    std::vector<std::string> keys = {"CARETZ_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
    if (!provider_key_variable.empty()) keys.push_back(provider_key_variable);
    return keys;
}

std::string variable_in(const Environment& env, const std::string& name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
}

Environment current_environment() {
    Environment env;
    for (char** e = environ; e && *e; ++e) {
        std::string entry = *e;
        auto eq = entry.find('=');
        if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
    return env;
}

Environment command_environment(const Environment& user, const Environment& overlay,
                                const std::vector<std::string>& api_keys) {
    Environment env = user;
    for (const auto& [name, value] : overlay) env[name] = value;
    for (const auto& key : api_keys) env.erase(key);
    return env;
}

std::vector<std::string> environment_strings(const Environment& env) {
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [name, value] : env) out.push_back(name + "=" + value);
    return out;
}

}  // namespace caretz
