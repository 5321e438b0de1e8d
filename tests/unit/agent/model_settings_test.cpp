#include "agent/model_settings.h"

#include <catch2/catch.hpp>

#include "agent/model_errors.h"

using namespace caretz;

TEST_CASE("model settings: OpenAI-compatible defaults and the environment", "[model]") {
    ModelSettings s = resolve_model_settings({}, {});
    CHECK(s.provider == Provider::openai);
    CHECK(s.base_url == "https://api.openai.com/v1");
    CHECK(chat_endpoint(s) == "https://api.openai.com/v1/chat/completions");
    CHECK(s.api_key.empty());
    CHECK(s.stall_timeout == std::chrono::seconds(120));

    s = resolve_model_settings({}, {{"CARETZ_BASE_URL", "http://127.0.0.1:11434/v1/"},
                                    {"CARETZ_MODEL", "qwen3"},
                                    {"OPENAI_API_KEY", "sk-openai"},
                                    {"CARETZ_STALL_TIMEOUT", "5"}});
    CHECK(chat_endpoint(s) == "http://127.0.0.1:11434/v1/chat/completions");
    CHECK(s.model == "qwen3");
    CHECK(s.api_key == "sk-openai");
    CHECK(s.stall_timeout == std::chrono::seconds(5));

    s = resolve_model_settings({},
                               {{"CARETZ_API_KEY", "sk-caretz"}, {"OPENAI_API_KEY", "sk-openai"}});
    CHECK(s.api_key == "sk-caretz");
}

TEST_CASE("model settings: flags beat the environment", "[model]") {
    ModelSettings s =
        resolve_model_settings({"openai", "flag-model", "http://flag/v1"},
                               {{"CARETZ_MODEL", "env"}, {"CARETZ_BASE_URL", "http://env/v1"}});
    CHECK(s.model == "flag-model");
    CHECK(s.base_url == "http://flag/v1");
}

TEST_CASE("model settings: Anthropic reads its own key and endpoint", "[model]") {
    ModelSettings s = resolve_model_settings(
        {"anthropic", "", ""}, {{"ANTHROPIC_API_KEY", "sk-ant"}, {"OPENAI_API_KEY", "sk-openai"}});
    CHECK(s.provider == Provider::anthropic);
    CHECK(s.api_key == "sk-ant");
    CHECK(chat_endpoint(s) == "https://api.anthropic.com/v1/messages");
    s.base_url = "http://127.0.0.1:9/v1";
    CHECK(chat_endpoint(s) == "http://127.0.0.1:9/v1/messages");
    CHECK(models_endpoint(s) == "http://127.0.0.1:9/v1/models");
    s.base_url = "https://api.anthropic.com";
    CHECK(models_endpoint(s) == "https://api.anthropic.com/v1/models");
}

TEST_CASE("model settings: the models list sits beside the chat endpoint", "[model]") {
    ModelSettings s = resolve_model_settings({}, {{"CARETZ_BASE_URL", "http://127.0.0.1:8080/v1"}});
    CHECK(models_endpoint(s) == "http://127.0.0.1:8080/v1/models");
}

TEST_CASE("model settings: a hosted API without a key is caught before any request", "[model]") {
    CHECK(missing_key_problem(resolve_model_settings({}, {}))
              .find("CARETZ_API_KEY or OPENAI_API_KEY") != std::string::npos);
    CHECK(missing_key_problem(resolve_model_settings({"anthropic", "", ""}, {}))
              .find("ANTHROPIC_API_KEY") != std::string::npos);
    CHECK(missing_key_problem(
              resolve_model_settings({}, {{"CARETZ_BASE_URL", "http://127.0.0.1:8080/v1"}}))
              .empty());
    CHECK(missing_key_problem(resolve_model_settings({}, {{"CARETZ_API_KEY", "k"}})).empty());
}

TEST_CASE("model errors: one line naming what to check", "[model]") {
    ModelSettings s = resolve_model_settings({}, {{"CARETZ_API_KEY", "bad"}});
    std::string m =
        http_failure_message(s, 401, R"({"error": {"message": "Incorrect API key provided"}})", 1);
    CHECK(m.find("rejected the API key") != std::string::npos);
    CHECK(m.find("HTTP 401: Incorrect API key provided") != std::string::npos);
    CHECK(m.find("CARETZ_API_KEY or OPENAI_API_KEY") != std::string::npos);
    CHECK(m.find("bad") == std::string::npos);

    CHECK(http_failure_message(s, 429, "", 4).find("after 4 attempts") != std::string::npos);
    CHECK(http_failure_message(s, 500, "oops\nmore", 4).find("HTTP 500: oops)") !=
          std::string::npos);
    CHECK(http_failure_message(s, 404, "", 1).find("--model") != std::string::npos);
    const std::string anthropic_body =
        R"({"type":"error","error":{"type":"authentication_error","message":"bad x-api-key"}})";
    CHECK(api_error_message(anthropic_body) == "bad x-api-key");
    CHECK(api_error_message(std::string(500, 'x')).size() == 300);
}
