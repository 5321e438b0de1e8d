#include "agent/context_window.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <string_view>

namespace caretz {

namespace {

struct KnownWindow {
    std::string_view prefix;
    long tokens;
};

// From the providers' model pages (2026-12).
constexpr KnownWindow kKnownWindows[] = {
    {"gpt-5", 400000},   {"gpt-4.1", 1047576},     {"gpt-4o", 128000},  {"gpt-4-turbo", 128000},
    {"gpt-4", 8192},     {"gpt-3.5-turbo", 16385}, {"o1", 200000},      {"o3", 200000},
    {"o4-mini", 200000}, {"codex-mini", 200000},   {"claude-", 200000},
};

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

long number_in(const std::smatch& match, size_t group) {
    std::string digits;
    for (char c : match[group].str())
        if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
    return digits.empty() || digits.size() > 12 ? 0 : std::stol(digits);
}

// Each server's wording: what says "too large", and where the window and the request's size
// stand in it.
struct Wording {
    std::regex pattern;
    size_t window_group;     // 0: the wording states no window
    size_t requested_group;  // 0: no size of the request
};

const std::vector<Wording>& wordings() {
    static const auto flags = std::regex::icase | std::regex::optimize;
    static const std::vector<Wording> list = {
        // OpenAI and vLLM: "This model's maximum context length is 8192 tokens. However, your
        // messages resulted in 9000 tokens" / "However, you requested 9000 tokens".
        {std::regex(R"(maximum context length is ([0-9,]+) tokens(?:[^0-9]*?([0-9,]+) tokens)?)",
                    flags),
         1, 2},
        // OpenAI's newer models: "Input tokens exceed the configured limit of 272000 tokens.
        // Your messages resulted in 272500 tokens."
        {std::regex(
             R"(exceed the configured limit of ([0-9,]+) tokens(?:[^0-9]*?([0-9,]+) tokens)?)",
             flags),
         1, 2},
        // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
        {std::regex(R"(prompt is too long: ([0-9,]+) tokens > ([0-9,]+) maximum)", flags), 2, 1},
        {std::regex(R"(prompt is too long)", flags), 0, 0},
        // llama.cpp's server: "request (4476 tokens) exceeds the available context size (4096
        // tokens)"; older ones: "the request exceeds the available context size".
        {std::regex(
             R"(\(([0-9,]+) tokens\) exceeds the available context size \(([0-9,]+) tokens\))",
             flags),
         2, 1},
        {std::regex(R"(exceeds? the available context size)", flags), 0, 0},
        // Ollama (with truncation off): "the input length exceeds the context length".
        {std::regex(R"(input length exceeds the context length)", flags), 0, 0},
        // vLLM's scheduler: "Input prompt (35247 tokens) is too long and exceeds limit of 4096".
        {std::regex(R"(prompt \(([0-9,]+) tokens\) is too long and exceeds limit of ([0-9,]+))",
                    flags),
         2, 1},
        // OpenAI's error code, and the Responses API's wording.
        {std::regex(R"(context_length_exceeded)", flags), 0, 0},
        {std::regex(R"(exceeds the context window)", flags), 0, 0},
    };
    return list;
}

}  // namespace

long known_context_window(const std::string& model) {
    const std::string name = lower(model);
    long best = 0;
    size_t best_length = 0;
    for (const auto& known : kKnownWindows) {
        if (name.starts_with(known.prefix) && known.prefix.size() > best_length) {
            best = known.tokens;
            best_length = known.prefix.size();
        }
    }
    return best;
}

std::optional<ContextOverflow> context_overflow(long status, const std::string& body) {
    // A window is refused with 400 (413 by some proxies); a stream's error has no status.
    if (status != 0 && status != 400 && status != 413) return std::nullopt;
    // Error bodies are short; a long one is some page, not an overflow report.
    const std::string text = body.substr(0, 8192);
    // Anthropic, when the prompt fits but not with the answer's room: "input length and
    // `max_tokens` exceed context limit: 195000 + 8192 > 200000". What is left for the prompt
    // is the window here.
    static const std::regex with_answer(
        R"(input length and .max_tokens. exceed context limit: ([0-9,]+) \+ ([0-9,]+) > ([0-9,]+))",
        std::regex::icase | std::regex::optimize);
    if (std::smatch match; std::regex_search(text, match, with_answer))
        return ContextOverflow{std::max(1L, number_in(match, 3) - number_in(match, 2)),
                               number_in(match, 1)};
    for (const auto& wording : wordings()) {
        std::smatch match;
        if (!std::regex_search(text, match, wording.pattern)) continue;
        ContextOverflow overflow;
        if (wording.window_group && match[wording.window_group].matched)
            overflow.window = number_in(match, wording.window_group);
        if (wording.requested_group && match[wording.requested_group].matched)
            overflow.requested = number_in(match, wording.requested_group);
        return overflow;
    }
    return std::nullopt;
}

}  // namespace caretz
