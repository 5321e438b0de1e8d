#pragma once

#include <optional>
#include <string>

namespace caretz {

// The context windows of hosted models Caretz knows, in tokens, by the longest matching prefix
// of the model's name; 0 for a model it does not know. Local servers (Ollama, llama.cpp, vLLM)
// are left out on purpose: their window is whatever the server was started with, so it comes
// from model.context_window or from the server's own error.
long known_context_window(const std::string& model);

// A request the server refused because it does not fit the model's context window.
struct ContextOverflow {
    long window = 0;     // the window the server stated, in tokens; 0 when it stated none
    long requested = 0;  // the request's size the server stated, in tokens; 0 when none
};

// Whether an error from the model API (its HTTP status, 0 for an error sent in the stream,
// and the message or body) says that the request is larger than the context window, as
// OpenAI, Anthropic, llama.cpp's server, Ollama and vLLM word it.
std::optional<ContextOverflow> context_overflow(long status, const std::string& body);

}  // namespace caretz
