#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/context_window.h"
#include "agent/conversation.h"
#include "agent/model_settings.h"
#include "agent/retry_policy.h"
#include "agent/stream_assembler.h"
#include "agent/turn_interrupt.h"

namespace caretz {

// One request's outcome: the reply, or why there is none.
struct ModelResult {
    AssistantReply reply;      // when interrupted: what had arrived
    std::string error;         // one line for the user; empty on success
    bool interrupted = false;  // the user pressed Ctrl-C
    // The error says that the request does not fit the model's context window.
    std::optional<ContextOverflow> overflow;

    bool ok() const { return error.empty() && !interrupted; }
};

// Talks to the configured model API: builds the provider's request, streams the answer,
// retries what may pass (429, 5xx) and turns every failure into one line. Never throws for
// what the server or the network does.
class ModelClient {
public:
    using Notice = std::function<void(const std::string&)>;

    explicit ModelClient(ModelSettings settings, RetryPolicy retry = {})
        : settings_(std::move(settings)), retry_(retry) {}

    // Asks for the next reply to `conversation`. Text goes to `on_text` as it streams;
    // `on_notice` hears about retries.
    ModelResult ask(const std::string& system, const Conversation& conversation,
                    const std::vector<ToolSpec>& tools, const StreamAssembler::TextSink& on_text,
                    const Notice& on_notice, TurnInterrupt& interrupt) const;

    // Whether the API answers a request for its list of models (GET, within `timeout`) with
    // the key it is given: nullopt when it does, else one line for the user, naming what to
    // check. The key itself never appears in the line.
    std::optional<std::string> reachability_problem(std::chrono::milliseconds timeout) const;

    const ModelSettings& settings() const { return settings_; }
    // /model: the next requests go to `model`.
    void set_model(std::string model) { settings_.model = std::move(model); }

private:
    std::vector<std::string> headers() const;
    std::vector<std::string> auth_headers() const;
    std::string unreachable_message(const std::string& failure) const;

    ModelSettings settings_;
    RetryPolicy retry_;
};

}  // namespace caretz
