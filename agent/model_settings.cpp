#include "agent/model_settings.h"

#include <cstdlib>

namespace caretz {

namespace {

std::string from_env(const Environment& env, const char* name) {
    auto it = env.find(name);
    return it == env.end() ? "" : it->second;
}

std::string first_set(std::initializer_list<std::string> values) {
    for (const auto& v : values)
        if (!v.empty()) return v;
    return "";
}

}  // namespace

ModelSettings resolve_model_settings(const ModelFlags& flags, const Environment& env) {
    ModelSettings s;
    s.provider = flags.provider == "anthropic" ? Provider::anthropic : Provider::openai;
    const bool anthropic = s.provider == Provider::anthropic;
    s.model = first_set(
        {flags.model, from_env(env, "CARETZ_MODEL"), anthropic ? "claude-sonnet-4-5" : "gpt-4.1"});
    s.base_url = first_set({flags.base_url, from_env(env, "CARETZ_BASE_URL"),
                            anthropic ? "https://api.anthropic.com" : "https://api.openai.com/v1"});
    while (s.base_url.size() > 1 && s.base_url.back() == '/') s.base_url.pop_back();
    if (anthropic) {
        s.api_key =
            first_set({from_env(env, "ANTHROPIC_API_KEY"), from_env(env, "CARETZ_API_KEY")});
        s.key_variables = "ANTHROPIC_API_KEY or CARETZ_API_KEY";
    } else {
        s.api_key = first_set({from_env(env, "CARETZ_API_KEY"), from_env(env, "OPENAI_API_KEY")});
        s.key_variables = "CARETZ_API_KEY or OPENAI_API_KEY";
    }
    long stall = std::atol(from_env(env, "CARETZ_STALL_TIMEOUT").c_str());
    if (stall > 0) s.stall_timeout = std::chrono::seconds(stall);
    return s;
}

std::string missing_key_problem(const ModelSettings& settings) {
    if (!settings.api_key.empty()) return "";
    const bool hosted = settings.base_url.starts_with("https://api.openai.com") ||
                        settings.base_url.starts_with("https://api.anthropic.com");
    if (!hosted) return "";
    return "no API key for " + settings.base_url + ": set " + settings.key_variables +
           ", or point --base-url (CARETZ_BASE_URL) at a local server";
}

namespace {

// Anthropic's base URL may name the API version already; an OpenAI-compatible one always does.
std::string endpoint(const ModelSettings& settings, const std::string& openai_path,
                     const std::string& anthropic_path) {
    if (settings.provider == Provider::openai) return settings.base_url + openai_path;
    if (settings.base_url.ends_with("/v1")) return settings.base_url + anthropic_path;
    return settings.base_url + "/v1" + anthropic_path;
}

}  // namespace

std::string chat_endpoint(const ModelSettings& settings) {
    return endpoint(settings, "/chat/completions", "/messages");
}

std::string models_endpoint(const ModelSettings& settings) {
    return endpoint(settings, "/models", "/models");
}

}  // namespace caretz
