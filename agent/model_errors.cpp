#include "agent/model_errors.h"

#include <cctype>
#include <nlohmann/json.hpp>

namespace caretz {

namespace {

std::string one_line(std::string text) {
    auto newline = text.find_first_of("\r\n");
    if (newline != std::string::npos) text.resize(newline);
    if (text.size() > 300) text = text.substr(0, 297) + "...";
    return text;
}

std::string json_message(const nlohmann::json& body) {
    if (!body.is_object()) return "";
    if (body.contains("error")) {
        const auto& e = body["error"];
        if (e.is_string()) return e.get<std::string>();
        if (e.is_object() && e.contains("message") && e["message"].is_string())
            return e["message"].get<std::string>();
    }
    if (body.contains("message") && body["message"].is_string())
        return body["message"].get<std::string>();
    return "";
}

}  // namespace

namespace {

// Characters a key is made of: an occurrence next to one of them is part of a longer word.
bool key_character(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

}  // namespace

std::string hide_key(std::string text, std::string_view key) {
    static constexpr std::string_view kStandIn = "(the key)";
    if (key.empty()) return text;
    // No ordinary word holds a key this long, and a longer word holding it still gives it away.
    const bool hide_inside_words = key.size() >= kKeyHiddenInsideWords;
    for (size_t at = text.find(key); at != std::string::npos;) {
        const size_t end = at + key.size();
        const bool alone = (at == 0 || !key_character(text[at - 1])) &&
                           (end == text.size() || !key_character(text[end]));
        if (alone || hide_inside_words) {
            text.replace(at, key.size(), kStandIn);
            at = text.find(key, at + kStandIn.size());
        } else {
            at = text.find(key, at + 1);
        }
    }
    return text;
}

std::string api_error_message(const std::string& body) {
    auto parsed = nlohmann::json::parse(body, nullptr, false);
    std::string message = parsed.is_discarded() ? "" : json_message(parsed);
    if (message.empty()) {
        auto start = body.find_first_not_of(" \t\r\n");
        message = start == std::string::npos ? "" : body.substr(start);
    }
    return one_line(message);
}

std::string http_failure_message(const ModelSettings& settings, long status,
                                 const std::string& body, int attempts) {
    std::string said = hide_key(api_error_message(body), settings.api_key);
    std::string code = "HTTP " + std::to_string(status) + (said.empty() ? "" : ": " + said);
    std::string tries = std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
    if (status == 401 || status == 403) {
        if (settings.api_key.empty())
            return "the model API at " + settings.base_url + " wants an API key (" + code +
                   "); set " + settings.key_variables;
        return "the model API at " + settings.base_url + " rejected the API key (" + code +
               "); check " + settings.key_variables;
    }
    if (status == 404)
        return "the model API at " + settings.base_url + " has no such endpoint or model (" + code +
               "); check --base-url and --model (now " + settings.model + ")";
    if (status == 429)
        return "the model API is still limiting requests after " + tries + " (" + code +
               "); try again later";
    if (status >= 500)
        return "the model API failed after " + tries + " (" + code + "); try again later";
    return "the model API refused the request (" + code + ")";
}

}  // namespace caretz
