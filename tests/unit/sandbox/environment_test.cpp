#include "sandbox/environment.h"

#include <catch2/catch.hpp>

using namespace caretz;

TEST_CASE("commands get the user's environment with the overlay and without API keys") {
    Environment user = {
        {"PATH", "/usr/bin"},    {"HOME", "/home/u"},        {"CARETZ_API_KEY", "c"},
        {"OPENAI_API_KEY", "o"}, {"ANTHROPIC_API_KEY", "a"}, {"MY_PROVIDER_KEY", "p"},
        {"EDITOR", "vi"}};
    Environment overlay = {{"EDITOR", "nano"}, {"LANG", "C.UTF-8"}, {"OPENAI_API_KEY", "x"}};
    auto env = command_environment(user, overlay, api_key_variables("MY_PROVIDER_KEY"));
    CHECK(env.at("PATH") == "/usr/bin");
    CHECK(env.at("EDITOR") == "nano");
    CHECK(env.at("LANG") == "C.UTF-8");
    CHECK(env.count("CARETZ_API_KEY") == 0);
    CHECK(env.count("OPENAI_API_KEY") == 0);  // the overlay cannot bring a key back
    CHECK(env.count("ANTHROPIC_API_KEY") == 0);
    CHECK(env.count("MY_PROVIDER_KEY") == 0);
}

TEST_CASE("environment_strings gives NAME=value entries") {
    auto strings = environment_strings({{"A", "1"}, {"B", "x=y"}});
    CHECK(strings == std::vector<std::string>{"A=1", "B=x=y"});
}
