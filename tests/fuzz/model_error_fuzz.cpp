// What a model server says back when it refuses a request is not Caretz's to control: Caretz
// reads whether it reports a full context window (with regular expressions over up to 8 KiB)
// and shows its words with the API key hidden. Whatever the words: no crash, no reading that
// takes seconds (libFuzzer's -timeout), sizes that are never negative, a one-line message of at
// most 300 bytes, and a short key that stands nowhere as a word of its own leaves the text
// exactly as it was. The input is KEY, a NUL byte, then the text.

#include <cctype>
#include <string>

#include "agent/context_window.h"
#include "agent/model_errors.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

namespace {

bool key_character(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

// Whether `key` occurs in `text` with no key character on either side.
bool stands_alone(std::string_view text, std::string_view key) {
    for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
        const size_t end = at + key.size();
        if ((at == 0 || !key_character(text[at - 1])) &&
            (end == text.size() || !key_character(text[end])))
            return true;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    const size_t nul = input.find('\0');
    const std::string_view key = nul == std::string_view::npos ? "" : input.substr(0, nul);
    const std::string text(nul == std::string_view::npos ? input : input.substr(nul + 1));

    for (long status : {0L, 400L, 413L, 429L}) {
        if (auto overflow = context_overflow(status, text)) {
            require(overflow->window >= 0 && overflow->requested >= 0, "a stated size is negative");
            require(status == 0 || status == 400 || status == 413,
                    "an overflow was read from a status that never reports one");
        }
    }
    const std::string message = api_error_message(text);
    require(message.size() <= 300, "the message is longer than 300 bytes");
    require(message.find_first_of("\r\n") == std::string::npos, "the message is not one line");

    const std::string hidden = hide_key(text, key);
    if (!key.empty() && key.size() < kKeyHiddenInsideWords && !stands_alone(text, key))
        require(hidden == text, "a key inside other words changed them");
    if (key.empty()) require(hidden == text, "an empty key changed the text");
    return 0;
}
