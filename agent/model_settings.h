#pragma once

#include <chrono>
#include <string>

#include "sandbox/environment.h"

namespace caretz {

enum class Provider { openai, anthropic };

// Which model Caretz talks to and how.
struct ModelSettings {
    Provider provider = Provider::openai;
    std::string model;
    std::string base_url;       // without a trailing slash
    std::string api_key;        // empty: send none (local servers need none)
    std::string key_variables;  // where a key is looked for, for error messages
    // How long the API may send nothing before the answer is given up as stalled.
    std::chrono::seconds stall_timeout{120};
};

// What the command line said about the model; empty strings leave the environment in force.
struct ModelFlags {
    std::string provider;
    std::string model;
    std::string base_url;
};

// Flags beat the environment (CARETZ_BASE_URL, CARETZ_MODEL, CARETZ_API_KEY, OPENAI_API_KEY,
// ANTHROPIC_API_KEY, CARETZ_STALL_TIMEOUT), which beats the provider's defaults.
ModelSettings resolve_model_settings(const ModelFlags& flags, const Environment& env);

// Why a request cannot work before it is sent (no key for a hosted API); empty when it may.
std::string missing_key_problem(const ModelSettings& settings);

// The URL a chat request goes to.
std::string chat_endpoint(const ModelSettings& settings);

// The URL that lists the models (GET), which answers quickly without costing tokens.
std::string models_endpoint(const ModelSettings& settings);

}  // namespace caretz
