#pragma once

#include <string>

#include "agent/model_settings.h"

namespace caretz {

// What an error body says, in one line: the JSON error's message as OpenAI-compatible servers
// and Anthropic send it, or the body's first line; at most 300 bytes.
std::string api_error_message(const std::string& body);

// The user's one-line explanation of a request the API answered with an error status, after
// `attempts` attempts, naming what to check (the key's variables, --base-url, --model).
std::string http_failure_message(const ModelSettings& settings, long status,
                                 const std::string& body, int attempts);

}  // namespace caretz
