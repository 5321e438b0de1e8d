#pragma once

#include <string>
#include <string_view>

#include "agent/model_settings.h"

namespace caretz {

// Keys at least this long are hidden even inside a longer word.
inline constexpr size_t kKeyHiddenInsideWords = 16;

// `text` with the key replaced by "(the key)" wherever it stands as a word of its own (not
// next to a letter, digit, '-' or '_'), for words that are not Caretz's own (what the
// server said back, curl's failure) before they reach the screen: a one-letter key for a local
// server must not turn "tokens" into "to(the key)ens". A key of kKeyHiddenInsideWords or more
// characters is hidden wherever it occurs. The search goes on after each replacement, so a key
// that occurs in "(the key)" is replaced once per occurrence in `text`. An empty key leaves
// `text` as it is.
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
