#include "agent/model_errors.h"

#include <catch2/catch.hpp>

#include "agent/model_client.h"

using namespace caretz;

namespace {

const std::string kRealKey = "sk-proj-4fQx9Lr2Tb8Wm1Zc7Ye3Nd6Kp0Hs5Jv";

ModelSettings settings_with_key(std::string key, std::string base_url) {
    ModelSettings settings;
    settings.model = "some-model";
    settings.base_url = std::move(base_url);
    settings.api_key = std::move(key);
    settings.key_variables = "CARETZ_API_KEY or OPENAI_API_KEY";
    return settings;
}

}  // namespace

TEST_CASE("hide_key hides the key where it stands as itself, and leaves other words whole") {
    struct Case {
        std::string key, text, hidden;
    };
    const Case cases[] = {
        {"", "Incorrect API key provided: ", "Incorrect API key provided: "},
        {"k", "Incorrect API key provided: k", "Incorrect API key provided: (the key)"},
        {"k", "prompt is too long: 9000 tokens > 8192 maximum; key k.",
         "prompt is too long: 9000 tokens > 8192 maximum; key (the key)."},
        {"k", "Bearer k, k-2 and k_3 and 2k", "Bearer (the key), k-2 and k_3 and 2k"},
        {"e", "the key: e", "the key: (the key)"},
        {"y", "key y", "key (the key)"},
        {"sk-local", "sk-local-2 is not sk-local", "sk-local-2 is not (the key)"},
        {"the", "the key is the", "(the key) key is (the key)"},
        {"key", "Incorrect API key provided: key", "Incorrect API (the key) provided: (the key)"},
        {"(the key)", "provided: (the key), twice (the key)",
         "provided: (the key), twice (the key)"},
        {kRealKey, "Incorrect API key provided: " + kRealKey + ".",
         "Incorrect API key provided: (the key)."},
        {kRealKey, kRealKey + kRealKey, "(the key)(the key)"},
        {kRealKey, "x" + kRealKey + "y", "x(the key)y"},
        {kRealKey, "nothing to hide", "nothing to hide"},
    };
    for (const auto& c : cases) {
        INFO("key \"" << c.key << "\" in \"" << c.text << "\"");
        CHECK(hide_key(c.text, c.key) == c.hidden);
    }
}

TEST_CASE("a refused key is hidden where the server quotes it back, Caretz's words stay whole") {
    const std::string url = "http://127.0.0.1:8080/v1";
    for (const std::string key : {"k", "e", "y", "the", "key", "(the key)"}) {
        INFO("key \"" << key << "\"");
        const std::string body =
            R"({"error": {"message": "Incorrect API key provided: )" + key + R"("}})";
        const std::string line = http_failure_message(settings_with_key(key, url), 401, body, 1);
        CHECK(line.starts_with("the model API at " + url + " rejected the API key (HTTP 401: "));
        CHECK(line.ends_with(": (the key)); check CARETZ_API_KEY or OPENAI_API_KEY"));
    }
    const std::string body =
        R"({"error": {"message": "Incorrect API key provided: )" + kRealKey + R"("}})";
    CHECK(http_failure_message(settings_with_key(kRealKey, url), 401, body, 1) ==
          "the model API at " + url +
              " rejected the API key (HTTP 401: Incorrect API key provided: (the key)); check "
              "CARETZ_API_KEY or OPENAI_API_KEY");
}

TEST_CASE("an unreachable API is reported whatever the key, even one found in the message") {
    // Nothing listens on the discard port: the connection is refused at once.
    const std::string url = "http://127.0.0.1:9/v1";
    for (const std::string key : {"", "k", "e", "y", "the", "key", "(the key)", kRealKey.c_str()}) {
        INFO("key \"" << key << "\"");
        ModelClient client(settings_with_key(key, url));
        auto problem = client.reachability_problem(std::chrono::seconds(5));
        REQUIRE(problem);
        CHECK(problem->starts_with("cannot reach the model API at " + url + " ("));
        CHECK(problem->ends_with("); check --base-url or CARETZ_BASE_URL"));
    }
}
