#include "app/config.h"

#include <catch2/catch.hpp>

using namespace caretz;
using Catch::Matchers::Contains;

namespace {

// The settings of one config file with the profile and flags given.
Settings settings_of(const ConfigFile& config, const std::optional<std::string>& profile = {},
                     const ConfigLayer& flags = {}) {
    return merge_settings(layers_in_force({config}, profile, flags));
}

}  // namespace

TEST_CASE("a config file sets every documented key") {
    auto config = parse_config(R"({
        "ask_sandbox_off": true,
        "permission_timeout": "5m",
        "allow_docker": true,
        "model": {"context_window": 32768},
        "sandbox": {
            "writable": ["~/cache"],
            "hidden": ["~/.kube"],
            "env": {"LANG": "C.UTF-8"},
            "allowed_domains": ["*.debian.org"],
            "cache_layer": false
        },
        "profiles": {"night": {"permission_timeout": "1h", "sandbox": {"writable": []}}}
    })",
                               "config.json");
    auto s = settings_of(config);
    CHECK(s.ask_sandbox_off);
    CHECK(s.permission_timeout == std::chrono::seconds(300));
    CHECK(s.sandbox.allow_docker);
    CHECK(s.context_window == 32768);
    CHECK(s.sandbox.writable == std::vector<std::string>{"~/cache"});
    CHECK(s.sandbox.hidden == std::vector<std::string>{"~/.kube"});
    CHECK(s.sandbox.env.at("LANG") == "C.UTF-8");
    CHECK_FALSE(s.sandbox.cache_layer);
    CHECK(s.sources.at("sandbox.cache_layer") == "sandbox.cache_layer in config.json");
    // On unless a file turns it off.
    CHECK(settings_of(parse_config("{}", "empty.json")).sandbox.cache_layer);
    CHECK(s.sandbox.allowed_domains == std::vector<std::string>{"*.debian.org"});
    REQUIRE(config.profiles.count("night") == 1);
}

TEST_CASE("flags beat the profile, the profile beats the config, the config beats defaults") {
    auto config = parse_config(R"({"permission_timeout": "5m", "ask_sandbox_off": false,
        "sandbox": {"writable": ["/a"]},
        "profiles": {"p": {"permission_timeout": "1h", "sandbox": {"writable": ["/b"]}}}})",
                               "c.json");
    CHECK_FALSE(settings_of({}).ask_sandbox_off);
    CHECK_FALSE(settings_of({}).permission_timeout.has_value());

    auto s = settings_of(config, "p");
    CHECK(s.permission_timeout == std::chrono::seconds(3600));
    CHECK(s.sandbox.writable == std::vector<std::string>{"/b"});

    ConfigLayer flags;
    flags.permission_timeout = std::chrono::seconds(90);
    flags.ask_sandbox_off = true;
    s = settings_of(config, "p", flags);
    CHECK(s.permission_timeout == std::chrono::seconds(90));
    CHECK(s.ask_sandbox_off);
}

TEST_CASE("the built-in ops profile turns on the offer and the config can extend it") {
    CHECK(settings_of({}, "ops").ask_sandbox_off);
    auto config = parse_config(R"({"profiles": {"ops": {"permission_timeout": "90s"}}})", "c");
    auto s = settings_of(config, "ops");
    CHECK(s.ask_sandbox_off);
    CHECK(s.permission_timeout == std::chrono::seconds(90));
}

TEST_CASE("an unknown profile is an error naming the known ones") {
    auto config = parse_config(R"({"profiles": {"mine": {}}})", "c");
    REQUIRE_THROWS_AS(settings_of(config, "nope"), ConfigError);
    CHECK_THROWS_WITH(settings_of(config, "nope"),
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
    CHECK_FALSE(settings_of(load_config("/nonexistent/caretz.json", false)).ask_sandbox_off);
    CHECK_THROWS_WITH(load_config("/nonexistent/caretz.json", true),
                      Contains("/nonexistent/caretz.json"));
}

TEST_CASE("denied domains are read and a profile replaces them like any list") {
    auto config = parse_config(R"({"sandbox": {"allowed_domains": ["pypi.org:443"],
        "denied_domains": ["*.internal.example.com"]},
        "profiles": {"open": {"sandbox": {"denied_domains": []}}}})",
                               "c.json");
    auto s = settings_of(config);
    CHECK(s.sandbox.allowed_domains == std::vector<std::string>{"pypi.org:443"});
    CHECK(s.sandbox.denied_domains == std::vector<std::string>{"*.internal.example.com"});
    CHECK(settings_of(config, "open").sandbox.denied_domains.empty());
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
    auto s = settings_of(config);
    CHECK(s.sandbox.visible == std::vector<std::string>{"~/.kube", "/home/u/.netrc"});
    // As for every key, a profile's list replaces the config file's.
    s = settings_of(config, "gh");
    CHECK(s.sandbox.visible == std::vector<std::string>{"~/.config/gh/hosts.yml"});
    CHECK(settings_of({}).sandbox.visible.empty());
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
    CHECK(settings_of({}).notice.mode == NotifyMode::desktop);
    CHECK(settings_of({}).notice.command.empty());
    auto config = parse_config(R"({"notify": "bell", "notify_command": ["notify-send", "-u", "x"],
        "profiles": {"quiet": {"notify": "off"}}})",
                               "c.json");
    auto s = settings_of(config);
    CHECK(s.notice.mode == NotifyMode::bell);
    CHECK(s.notice.command == std::vector<std::string>{"notify-send", "-u", "x"});
    CHECK(settings_of(config, "quiet").notice.mode == NotifyMode::off);
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
    auto s = settings_of(config);
    CHECK(s.sources.at("allow_docker") == "allow_docker in /etc/c.json");
    CHECK(s.sources.at("sandbox.writable") == "sandbox.writable in /etc/c.json");
    CHECK(s.sources.at("sandbox.hidden") == "sandbox.hidden in /etc/c.json");
    CHECK(s.sources.count("permission_timeout") == 0);

    ConfigLayer flags;
    flags.allow_docker = true;
    flags.sources["allow_docker"] = "--allow-docker";
    s = settings_of(config, "p", flags);
    CHECK(s.sources.at("sandbox.writable") == "sandbox.writable in /etc/c.json, profile p");
    CHECK(s.sources.at("sandbox.hidden") == "sandbox.hidden in /etc/c.json");
    CHECK(s.sources.at("allow_docker") == "--allow-docker");
    CHECK(settings_of({}, "ops").sources.at("ask_sandbox_off") == "built-in profile ops");
}

TEST_CASE("audit.syslog is off unless the config or a profile turns it on") {
    CHECK_FALSE(settings_of({}).audit_syslog);
    auto config = parse_config(
        R"({"audit": {"syslog": true}, "profiles": {"quiet": {"audit": {"syslog": false}}}})",
        "c.json");
    CHECK(settings_of(config).audit_syslog);
    CHECK_FALSE(settings_of(config, "quiet").audit_syslog);
    CHECK(settings_of(config).sources.at("audit.syslog") == "audit.syslog in c.json");
    CHECK_THROWS_WITH(parse_config(R"({"audit": {"syslog": "yes"}})", "c.json"),
                      Contains("\"audit.syslog\" must be true or false"));
    CHECK_THROWS_WITH(parse_config(R"({"audit": {"file": "/x"}})", "c.json"),
                      Contains("\"audit.file\" is not a known audit setting"));
}

TEST_CASE("model.context_window must be a count of tokens above 0") {
    for (const char* bad :
         {R"({"model": {"context_window": 0}})", R"({"model": {"context_window": "128k"}})",
          R"({"model": {"context_window": 1.5}})"}) {
        INFO(bad);
        CHECK_THROWS_WITH(parse_config(bad, "config.json"),
                          Contains("\"model.context_window\" must be a whole number of tokens"));
    }
    CHECK_THROWS_WITH(parse_config(R"({"model": {"name": "x"}})", "config.json"),
                      Contains("\"model.name\" is not a known model setting"));
}
