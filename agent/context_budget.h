#pragma once

#include <cstddef>
#include <string>

namespace caretz {

// The most of a command's output one result holds, unless the model's context window asks for
// less (ContextBudget::result_limit): one command must not fill the conversation.
inline constexpr size_t kResultOutputLimit = 16 * 1024;

// How big a conversation may grow for the model in use, and how big it is. Sizes are measured
// in bytes of the conversation's text (conversation_bytes) and turned into tokens with the
// ratio the API's own usage reports showed, or a cautious guess before the first report. The
// window comes from model.context_window, the table of known models, or what a server's
// overflow error stated; a request the server refused as too large lowers it, so that one is
// never sent twice. Pure: no I/O.
class ContextBudget {
public:
    // `configured`: model.context_window (0: not set).
    ContextBudget(long configured, const std::string& model);

    // /model: the window of the new model (the configured one still wins).
    void set_model(const std::string& model);

    // The window in tokens; 0 while unknown.
    long window() const { return window_; }
    // Where the window came from: "model.context_window", "known model", "the server's
    // error", or "" while unknown.
    const std::string& window_source() const { return window_source_; }

    // The API said that a request of `bytes` took `prompt_tokens`.
    void observe(size_t bytes, long prompt_tokens);
    // The API refused a request of `bytes` as too large; `stated_window` is the window its
    // error named (0: none).
    void refused(size_t bytes, long stated_window);

    long tokens(size_t bytes) const;
    // Whether a request of `bytes` should be compacted before it is sent: past three quarters
    // of the window (the rest is for the answer), or as large as one already refused.
    bool needs_compaction(size_t bytes) const;
    // Whether a request of `bytes` is at least as large as one the server refused.
    bool known_too_large(size_t bytes) const {
        return refused_bytes_ != 0 && bytes >= refused_bytes_;
    }
    // What compaction aims for, in bytes: two fifths of the window, so that the next few
    // commands fit before the next compaction. 0 while the window is unknown.
    size_t target_bytes() const;
    // The most a single command's result may hold, in bytes: 16 KiB, or a tenth of the window
    // when that is less, never under 2 KiB.
    size_t result_limit() const;

private:
    size_t bytes_for(long tokens) const;

    long configured_;
    long window_ = 0;
    std::string window_source_;
    double bytes_per_token_;
    size_t refused_bytes_ = 0;  // the smallest request refused as too large; 0: none
};

}  // namespace caretz
