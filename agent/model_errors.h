#pragma once

#include <string>
#include <string_view>

#include "agent/model_settings.h"

namespace caretz {

// `text` with every occurrence of `key` replaced by "(the key)", for words that are not
// Caretz's own (what the server said back, curl's failure) before they reach the screen. The
// search goes on after each replacement, so a key that occurs in "(the key)" is replaced once
// per occurrence in `text` and no more. An empty key leaves `text` as it is.
std::string hide_key(std::string text, std::string_view key);

// What an error body says, in one line: the JSON error's message as OpenAI-compatible servers
// and Anthropic send it, or the body's first line; at most 300 bytes.
std::string api_error_message(const std::string& body);

// The user's one-line explanation of a request the API answered with an error status, after
// `attempts` attempts, naming what to check (the key's variables, --base-url, --model). The
// server's words may quote the key back; it is hidden in them (hide_key).
std::string http_failure_message(const ModelSettings& settings, long status,
                                 const std::string& body, int attempts);

}  // namespace caretz
