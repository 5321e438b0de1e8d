#pragma once

#include <map>
#include <string>
#include <vector>

namespace caretz {

using Environment = std::map<std::string, std::string>;

// The variables that hold Caretz's own model keys; no sandboxed or rerun command gets them.
// `provider_key_variable` is the key variable the configured provider reads (may be empty).
std::vector<std::string> api_key_variables(const std::string& provider_key_variable);

// The value of `name` in `env`; "" when it is not set.
std::string variable_in(const Environment& env, const std::string& name);

// The environment of this process.
Environment current_environment();

// The user's environment with the overlay applied and the API keys removed.
Environment command_environment(const Environment& user, const Environment& overlay,
                                const std::vector<std::string>& api_keys);

// "NAME=value" strings for execve.
std::vector<std::string> environment_strings(const Environment& env);

}  // namespace caretz
