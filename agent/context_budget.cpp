#include "agent/context_budget.h"

#include <algorithm>
#include <cmath>

#include "agent/context_window.h"

namespace caretz {

namespace {

// Before the API reports usage: English text runs about four bytes a token, logs and JSON
// nearer three; guessing low keeps the first request from overflowing.
constexpr double kGuessedBytesPerToken = 3.0;
constexpr size_t kMinResultBytes = 2 * 1024;

}  // namespace

ContextBudget::ContextBudget(long configured, const std::string& model)
    : configured_(configured), bytes_per_token_(kGuessedBytesPerToken) {
    set_model(model);
}

void ContextBudget::set_model(const std::string& model) {
    refused_bytes_ = 0;
    if (configured_ > 0) {
        window_ = configured_;
        window_source_ = "model.context_window";
    } else if (long known = known_context_window(model)) {
        window_ = known;
        window_source_ = "known model";
    } else {
        window_ = 0;
        window_source_.clear();
    }
}

void ContextBudget::observe(size_t bytes, long prompt_tokens) {
    // A server that reports nonsense (0, or a count from another request) is not believed.
    if (prompt_tokens <= 0 || bytes < 1024) return;
    bytes_per_token_ = std::clamp(static_cast<double>(bytes) / prompt_tokens, 1.5, 6.0);
}

void ContextBudget::refused(size_t bytes, long stated_window) {
    refused_bytes_ = refused_bytes_ == 0 ? bytes : std::min(refused_bytes_, bytes);
    if (stated_window > 0) {
        window_ = stated_window;
        window_source_ = "the server's error";
    } else if (window_ == 0 || tokens(bytes) < window_) {
        // The window is smaller than what was refused.
        window_ = std::max(1L, tokens(bytes) - 1);
        window_source_ = "the server's error";
    }
}

long ContextBudget::tokens(size_t bytes) const {
    return static_cast<long>(std::ceil(static_cast<double>(bytes) / bytes_per_token_));
}

size_t ContextBudget::bytes_for(long tokens) const {
    return static_cast<size_t>(static_cast<double>(tokens) * bytes_per_token_);
}

bool ContextBudget::needs_compaction(size_t bytes) const {
    if (known_too_large(bytes)) return true;
    return window_ > 0 && tokens(bytes) > window_ * 3 / 4;
}

size_t ContextBudget::target_bytes() const {
    size_t target = window_ > 0 ? bytes_for(window_ * 2 / 5) : 0;
    if (refused_bytes_ != 0) target = std::min(target, refused_bytes_ / 2);
    return target;
}

size_t ContextBudget::result_limit() const {
    if (window_ <= 0) return kResultOutputLimit;
    return std::clamp(bytes_for(window_) / 10, kMinResultBytes, kResultOutputLimit);
}

}  // namespace caretz
