#include "agent/model_client.h"

#include <ctime>
#include <memory>

#include "agent/anthropic_api.h"
#include "agent/http_stream.h"
#include "agent/model_error.h"
#include "agent/model_errors.h"
#include "agent/openai_api.h"
#include "agent/sse_reader.h"

namespace caretz {

namespace {

constexpr int kAnthropicMaxTokens = 8192;

std::unique_ptr<StreamAssembler> assembler_for(Provider provider,
                                               const StreamAssembler::TextSink& on_text) {
    if (provider == Provider::anthropic) return std::make_unique<AnthropicStream>(on_text);
    return std::make_unique<OpenAiStream>(on_text);
}

// Feeds the body into the SSE reader and the assembler; the first problem stops the stream.
class StreamConsumer {
public:
    explicit StreamConsumer(StreamAssembler& assembler) : assembler_(assembler) {}

    bool take(std::string_view bytes) {
        try {
            for (const auto& event : reader_.feed(bytes)) {
                ++events_;
                assembler_.feed(event);
            }
            return true;
        } catch (const ModelError& e) {
            error_ = e.what();
        } catch (const nlohmann::json::exception& e) {
            error_ = std::string("the model API sent a stream event of an unexpected shape (") +
                     e.what() + ")";
        }
        return false;
    }

    int events() const { return events_; }
    const std::string& error() const { return error_; }

private:
    StreamAssembler& assembler_;
    SseReader reader_;
    int events_ = 0;
    std::string error_;
};

std::string seconds(std::chrono::milliseconds ms) {
    auto s = (ms.count() + 999) / 1000;
    return std::to_string(s) + " s";
}

}  // namespace

std::vector<std::string> ModelClient::headers() const {
    std::vector<std::string> h = {"Content-Type: application/json", "Accept: text/event-stream",
                                  "Expect:"};
    for (auto& line : auth_headers()) h.push_back(std::move(line));
    return h;
}

std::vector<std::string> ModelClient::auth_headers() const {
    std::vector<std::string> h;
    if (settings_.provider == Provider::anthropic) {
        h.push_back("anthropic-version: 2023-06-01");
        if (!settings_.api_key.empty()) h.push_back("x-api-key: " + settings_.api_key);
    } else if (!settings_.api_key.empty()) {
        h.push_back("Authorization: Bearer " + settings_.api_key);
    }
    return h;
}

std::optional<std::string> ModelClient::reachability_problem(
    std::chrono::milliseconds timeout) const {
    std::string problem = missing_key_problem(settings_);
    if (problem.empty()) {
        HttpResult http = get_status({models_endpoint(settings_), auth_headers(), ""}, timeout);
        if (http.status == 0)
            problem = unreachable_message(http.failure);
        else if (http.status < 200 || http.status >= 300)
            problem = http_failure_message(settings_, http.status, http.error_body, 1);
    }
    return problem.empty() ? std::nullopt : std::optional<std::string>(problem);
}

std::string ModelClient::unreachable_message(const std::string& failure) const {
    return "cannot reach the model API at " + settings_.base_url + " (" +
           hide_key(failure, settings_.api_key) + "); check --base-url or CARETZ_BASE_URL";
}

ModelResult ModelClient::ask(const std::string& system, const Conversation& conversation,
                             const std::vector<ToolSpec>& tools,
                             const StreamAssembler::TextSink& on_text, const Notice& on_notice,
                             TurnInterrupt& interrupt) const {
    nlohmann::json body =
        settings_.provider == Provider::anthropic
            ? anthropic_request(settings_.model, system, conversation, tools, kAnthropicMaxTokens)
            : openai_request(settings_.model, system, conversation, tools);
    HttpRequest request{chat_endpoint(settings_), headers(),
                        body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
    const std::string stall = std::to_string(settings_.stall_timeout.count()) + " s";

    for (int attempt = 1;; ++attempt) {
        ModelResult out;
        auto assembler = assembler_for(settings_.provider, on_text);
        StreamConsumer consumer(*assembler);
        HttpResult http = post_streaming(
            request, [&](std::string_view bytes) { return consumer.take(bytes); }, interrupt,
            settings_.stall_timeout);
        out.reply = assembler->reply();
        if (http.interrupted) {
            out.interrupted = true;
            return out;
        }
        if (!consumer.error().empty()) {
            out.error = consumer.error();
            out.overflow = context_overflow(0, out.error);
            return out;
        }
        if (http.status == 0) {
            out.error = http.stalled ? "the model API at " + settings_.base_url +
                                           " sent nothing for " + stall + "; gave up waiting"
                                     : unreachable_message(http.failure);
            return out;
        }
        if (http.status < 200 || http.status >= 300) {
            // Sending it again could only fail again: the caller compacts first.
            if ((out.overflow = context_overflow(http.status, http.error_body))) {
                out.error = http_failure_message(settings_, http.status, http.error_body, attempt);
                return out;
            }
            auto wait = retry_.wait_before_retry(attempt, http.status, http.retry_after,
                                                 std::time(nullptr));
            if (!wait) {
                out.error = http_failure_message(settings_, http.status, http.error_body, attempt);
                return out;
            }
            if (on_notice)
                on_notice("the model API answered HTTP " + std::to_string(http.status) +
                          "; trying again in " + seconds(*wait) + " (attempt " +
                          std::to_string(attempt + 1) + " of " +
                          std::to_string(retry_.max_attempts) + ")");
            if (interrupt.wait(*wait)) {
                out.interrupted = true;
                return out;
            }
            continue;
        }
        if (http.stalled) {
            out.error =
                "the model API stopped sending in the middle of its answer; gave up "
                "after " +
                stall + " of silence";
        } else if (!assembler->complete() && consumer.events() == 0) {
            out.error = "the model API at " + settings_.base_url +
                        " did not answer with an event stream; check --base-url" +
                        (settings_.provider == Provider::openai
                             ? " (an OpenAI-compatible API's usually ends in /v1)"
                             : "");
        } else if (!assembler->complete()) {
            out.error =
                "the model's answer was cut off before it finished (the stream ended "
                "early" +
                (http.failure.empty() ? "" : ": " + http.failure) + ")";
        }
        return out;
    }
}

}  // namespace caretz
