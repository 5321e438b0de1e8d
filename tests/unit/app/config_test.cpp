#include "app/config.h"

#include <catch2/catch.hpp>

using namespace caretz;
using Catch::Matchers::Contains;

TEST_CASE("a config file sets every documented key") {
    auto config = parse_config(R"({
        "ask_sandbox_off": true,
        "permission_timeout": "5m",
        "allow_docker": true,
        "sandbox": {
            "writable": ["~/cache"],
            "hidden": ["~/.kube"],
            "env": {"LANG": "C.UTF-8"},
            "allowed_domains": ["*.debian.org"]
        },
        "profiles": {"night": {"permission_timeout": "1h", "sandbox": {"writable": []}}}
    })",
                               "config.json");
    auto s = merge_settings(config, std::nullopt, {});
    CHECK(s.ask_sandbox_off);
    CHECK(s.permission_timeout == std::chrono::seconds(300));
    CHECK(s.sandbox.allow_docker);
    CHECK(s.sandbox.writable == std::vector<std::string>{"~/cache"});
    CHECK(s.sandbox.hidden == std::vector<std::string>{"~/.kube"});
    CHECK(s.sandbox.env.at("LANG") == "C.UTF-8");
    CHECK(s.sandbox.allowed_domains == std::vector<std::string>{"*.debian.org"});
    REQUIRE(config.profiles.count("night") == 1);
}

TEST_CASE("flags beat the profile, the profile beats the config, the config beats defaults") {
    auto config = parse_config(R"({"permission_timeout": "5m", "ask_sandbox_off": false,
        "sandbox": {"writable": ["/a"]},
        "profiles": {"p": {"permission_timeout": "1h", "sandbox": {"writable": ["/b"]}}}})",
                               "c.json");
    CHECK_FALSE(merge_settings({}, std::nullopt, {}).ask_sandbox_off);
    CHECK_FALSE(merge_settings({}, std::nullopt, {}).permission_timeout.has_value());

    auto profile = find_profile(config, "p");
    auto s = merge_settings(config, profile, {});
    CHECK(s.permission_timeout == std::chrono::seconds(3600));
    CHECK(s.sandbox.writable == std::vector<std::string>{"/b"});

    ConfigLayer flags;
    flags.permission_timeout = std::chrono::seconds(90);
    flags.ask_sandbox_off = true;
    s = merge_settings(config, profile, flags);
    CHECK(s.permission_timeout == std::chrono::seconds(90));
    CHECK(s.ask_sandbox_off);
}

TEST_CASE("the built-in ops profile turns on the offer and the config can extend it") {
    CHECK(merge_settings({}, find_profile({}, "ops"), {}).ask_sandbox_off);
    auto config = parse_config(R"({"profiles": {"ops": {"permission_timeout": "90s"}}})", "c");
    auto s = merge_settings(config, find_profile(config, "ops"), {});
    CHECK(s.ask_sandbox_off);
    CHECK(s.permission_timeout == std::chrono::seconds(90));
}

TEST_CASE("an unknown profile is an error naming the known ones") {
    auto config = parse_config(R"({"profiles": {"mine": {}}})", "c");
    REQUIRE_THROWS_AS(find_profile(config, "nope"), ConfigError);
    CHECK_THROWS_WITH(find_profile(config, "nope"),
                      Contains("nope") && Contains("ops") && Contains("mine"));
}

TEST_CASE("the profile names are the built-in ones and the config's own, once each, sorted") {
    auto config = parse_config(R"({"profiles": {"staging": {}, "ops": {}, "audit": {}}})", "c");
    CHECK(profile_names(config) == std::vector<std::string>{"audit", "ops", "staging"});
    CHECK(profile_names({}) == std::vector<std::string>{"ops"});
}

TEST_CASE("invalid JSON names the file and the line") {
    CHECK_THROWS_WITH(parse_config("{\n  \"allow_docker\": true,\n  oops\n}", "/x/config.json"),
                      Contains("/x/config.json:3") && Contains("not valid JSON"));
    CHECK_THROWS_WITH(parse_config("", "/x/c.json"), Contains("/x/c.json:1"));
}

TEST_CASE("a wrong type names the file, the key and its line") {
    CHECK_THROWS_WITH(
        parse_config("{\n\n  \"allow_docker\": \"yes\"\n}", "c.json"),
        Contains("c.json:3") && Contains("\"allow_docker\"") && Contains("true or false"));
    CHECK_THROWS_WITH(parse_config("{\"permission_timeout\": \"soon\"}", "c.json"),
                      Contains("\"permission_timeout\"") && Contains("duration"));
    CHECK_THROWS_WITH(parse_config("{\"sandbox\": {\n\"writable\": [1]}}", "c.json"),
                      Contains("c.json:2") && Contains("\"sandbox.writable\""));
    CHECK_THROWS_WITH(parse_config("{\"sandbox\": {\"env\": {\"A\": 1}}}", "c.json"),
                      Contains("\"sandbox.env\""));
    CHECK_THROWS_WITH(
        parse_config("{\"profiles\": {\"p\": {\n\n\"ask_sandbox_off\": 1}}}", "c.json"),
        Contains("c.json:3") && Contains("\"profiles.p.ask_sandbox_off\""));
    CHECK_THROWS_WITH(parse_config("[]", "c.json"), Contains("must be an object"));
}

TEST_CASE("an unknown key is an error, not silently ignored") {
    CHECK_THROWS_WITH(parse_config("{\"ask_sandbox_of\": true}", "c.json"),
                      Contains("\"ask_sandbox_of\"") && Contains("not a known setting"));
    CHECK_THROWS_WITH(parse_config("{\"sandbox\": {\"writeable\": []}}", "c.json"),
                      Contains("\"sandbox.writeable\""));
}

TEST_CASE("a missing config file is empty unless it was named on the command line") {
    CHECK_FALSE(merge_settings(load_config("/nonexistent/caretz.json", false), std::nullopt, {})
                    .ask_sandbox_off);
    CHECK_THROWS_WITH(load_config("/nonexistent/caretz.json", true),
                      Contains("/nonexistent/caretz.json"));
}

TEST_CASE("denied domains are read and a profile replaces them like any list") {
    auto config = parse_config(R"({"sandbox": {"allowed_domains": ["pypi.org:443"],
        "denied_domains": ["*.internal.example.com"]},
        "profiles": {"open": {"sandbox": {"denied_domains": []}}}})",
                               "c.json");
    auto s = merge_settings(config, std::nullopt, {});
    CHECK(s.sandbox.allowed_domains == std::vector<std::string>{"pypi.org:443"});
    CHECK(s.sandbox.denied_domains == std::vector<std::string>{"*.internal.example.com"});
    CHECK(merge_settings(config, find_profile(config, "open"), {}).sandbox.denied_domains.empty());
}

TEST_CASE("a domain entry that is no host pattern names the key and the entry") {
    for (const char* key : {"allowed_domains", "denied_domains"}) {
        std::string text =
            std::string("{\n\"sandbox\": {\n\"") + key + "\": [\"https://pypi.org/simple\"]}}";
        INFO(text);
        CHECK_THROWS_WITH(parse_config(text, "c.json"),
                          Contains("c.json:3: \"sandbox." + std::string(key) + "\"") &&
                              Contains("https://pypi.org/simple") && Contains("*.example.com"));
    }
}

namespace {

ConfigContext user_context() {
    return {"/home/u", default_hidden_paths("/home/u", "/home/u/proj", {})};
}

}  // namespace

TEST_CASE("sandbox.visible names credential stores hidden by default, in the config or a profile") {
    auto config = parse_config(R"({"sandbox": {"visible": ["~/.kube", "/home/u/.netrc"]},
        "profiles": {"gh": {"sandbox": {"visible": ["~/.config/gh/hosts.yml"]}}}})",
                               "c.json", user_context());
    auto s = merge_settings(config, std::nullopt, {});
    CHECK(s.sandbox.visible == std::vector<std::string>{"~/.kube", "/home/u/.netrc"});
    // As for every key, a profile's list replaces the config file's.
    s = merge_settings(config, find_profile(config, "gh"), {});
    CHECK(s.sandbox.visible == std::vector<std::string>{"~/.config/gh/hosts.yml"});
    CHECK(merge_settings({}, std::nullopt, {}).sandbox.visible.empty());
}

TEST_CASE("sandbox.visible naming a path that is not a credential store stops Caretz") {
    auto error_for = [](const std::string& entry) {
        try {
            parse_config("{\n\"sandbox\": {\n\"visible\": [\"" + entry + "\"]}}", "c.json",
                         user_context());
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    CHECK_THAT(error_for("~/notes"), Contains("c.json:3") && Contains("\"sandbox.visible\"") &&
                                         Contains("\"~/notes\"") &&
                                         Contains("not hidden by default"));
    CHECK_THAT(error_for("~/.ssh"), Contains("\"~/.ssh\"") && Contains("stays hidden always"));
    CHECK_THAT(error_for("~/.config/caretz"), Contains("stays hidden always"));
    CHECK_THAT(error_for("/run"), Contains("stays hidden always"));
    CHECK_THAT(error_for("~/.kube/config"), Contains("name \"~/.kube\""));
    CHECK_THAT(error_for(".netrc"), Contains("not a path from / or ~/"));
    CHECK_THAT(error_for("~/.netrc"), Contains("(no error)"));
}

TEST_CASE("without a context, sandbox.visible can name nothing") {
    CHECK_THROWS_AS(parse_config(R"({"sandbox": {"visible": ["~/.kube"]}})", "c.json"),
                    ConfigError);
}

TEST_CASE("notify and notify_command are read, and desktop is the default") {
    CHECK(merge_settings({}, std::nullopt, {}).notice.mode == NotifyMode::desktop);
    CHECK(merge_settings({}, std::nullopt, {}).notice.command.empty());
    auto config = parse_config(R"({"notify": "bell", "notify_command": ["notify-send", "-u", "x"],
        "profiles": {"quiet": {"notify": "off"}}})",
                               "c.json");
    auto s = merge_settings(config, std::nullopt, {});
    CHECK(s.notice.mode == NotifyMode::bell);
    CHECK(s.notice.command == std::vector<std::string>{"notify-send", "-u", "x"});
    CHECK(merge_settings(config, find_profile(config, "quiet"), {}).notice.mode == NotifyMode::off);
    CHECK_THROWS_WITH(parse_config(R"({"notify": "loud"})", "c.json"),
                      Contains("\"notify\" must be \"desktop\", \"bell\" or \"off\""));
    // A shell line is no argv: it must be a list, and a list with a program.
    CHECK_THROWS_WITH(parse_config(R"({"notify_command": "notify-send hi"})", "c.json"),
                      Contains("\"notify_command\" must be a list"));
    CHECK_THROWS_WITH(parse_config(R"({"notify_command": []})", "c.json"),
                      Contains("\"notify_command\" must be a list"));
}

TEST_CASE("the merged settings say which file, profile or flag set each value") {
    auto config = parse_config(R"({"allow_docker": true, "sandbox": {"writable": ["/a"],
        "hidden": ["/h"]}, "profiles": {"p": {"sandbox": {"writable": ["/b"]}}}})",
                               "/etc/c.json");
    auto s = merge_settings(config, std::nullopt, {});
    CHECK(s.sources.at("allow_docker") == "allow_docker in /etc/c.json");
    CHECK(s.sources.at("sandbox.writable") == "sandbox.writable in /etc/c.json");
    CHECK(s.sources.at("sandbox.hidden") == "sandbox.hidden in /etc/c.json");
    CHECK(s.sources.count("permission_timeout") == 0);

    ConfigLayer flags;
    flags.allow_docker = true;
    flags.sources["allow_docker"] = "--allow-docker";
    s = merge_settings(config, find_profile(config, "p"), flags);
    CHECK(s.sources.at("sandbox.writable") == "sandbox.writable in /etc/c.json, profile p");
    CHECK(s.sources.at("sandbox.hidden") == "sandbox.hidden in /etc/c.json");
    CHECK(s.sources.at("allow_docker") == "--allow-docker");
    CHECK(merge_settings({}, find_profile({}, "ops"), {}).sources.at("ask_sandbox_off") ==
          "built-in profile ops");
}
