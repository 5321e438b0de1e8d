#include "agent/sandbox_report.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace caretz;
using Catch::Matchers::Contains;

namespace {

SandboxReport example() {
    SandboxReport r;
    r.workspace = "/home/u/ws";
    r.profile = {"", "default"};
    r.plan_mode_source = "default";
    r.allow_docker = {"on", "--allow-docker"};
    r.ask_sandbox_off = {"on", "built-in profile ops"};
    r.permission_timeout = {"", "default"};
    r.notify = {"desktop", "default"};
    r.writable = {{"/tmp", "built in: private to the sandbox"},
                  {"/home/u/ws", "built in: the folder Caretz started in"},
                  {"/srv/data", "sandbox.writable in /home/u/.config/caretz/config.json"}};
    r.read_only = {{"/home/u/ws/.git/hooks", "built in: a repository's hooks and config"}};
    r.hidden = {{"/run", "built in"},
                {"/opt/secret\x1b[2J", "sandbox.hidden in /home/u/.config/caretz/config.json"}};
    r.env_added = {{"LANG=C.UTF-8", "sandbox.env in /home/u/.config/caretz/config.json"}};
    r.env_removed = {{"OPENAI_API_KEY", "built in: Caretz's API keys"}};
    r.allowed_domains = {{"*.debian.org", "sandbox.allowed_domains in c.json"}};
    return r;
}

}  // namespace

TEST_CASE("report: each value stands beside what set it, escaped", "[sandbox_report]") {
    const std::string text = report_text(example());
    CHECK_THAT(text,
               Contains("  /srv/data  [sandbox.writable in /home/u/.config/caretz/config.json]\n"));
    CHECK_THAT(text, Contains("  /run  [built in]\n"));
    CHECK_THAT(text, Contains("/opt/secret\\e[2J  [sandbox.hidden in"));
    CHECK_THAT(text, !Contains("\x1b"));
    CHECK_THAT(text, Contains("Docker socket:        given (--allow-docker)  [--allow-docker]"));
    CHECK_THAT(text, Contains("  *.debian.org  [sandbox.allowed_domains in c.json]"));
    CHECK_THAT(text, Contains("Network denied:\n  (none)\n"));
    CHECK_THAT(text, !Contains("for this session"));
}

TEST_CASE("report: in plan mode only the private /tmp is writable", "[sandbox_report]") {
    SandboxReport r = example();
    r.plan_mode = true;
    r.plan_mode_source = "/plan";
    REQUIRE(writable_now(r).size() == 1);
    CHECK(writable_now(r)[0].value == "/tmp");
    const std::string text = report_text(r);
    CHECK_THAT(text,
               Contains("Plan mode:            on (read-only, nothing runs outside)  [/plan]"));
    CHECK_THAT(text, !Contains("/srv/data"));
}

TEST_CASE("report: the session's network allowances show when there is a session",
          "[sandbox_report]") {
    SandboxReport r = example();
    r.session_network_allowances = std::vector<std::string>{"example.com:443"};
    CHECK_THAT(report_text(r), Contains("Network allowed for this session:\n  example.com:443"));
}

TEST_CASE("report: the JSON form keeps every value with its source", "[sandbox_report]") {
    auto j = nlohmann::json::parse(report_json(example()));
    CHECK(j["workspace"] == "/home/u/ws");
    CHECK(j["profile"]["value"].is_null());
    CHECK(j["allow_docker"]["value"] == true);
    CHECK(j["allow_docker"]["source"] == "--allow-docker");
    CHECK(j["plan_mode"]["value"] == false);
    CHECK(j["permission_timeout"]["value"].is_null());
    CHECK(j["writable"][2]["value"] == "/srv/data");
    CHECK(j["hidden"][1]["value"] == "/opt/secret\x1b[2J");
    CHECK(j["env_removed"][0]["value"] == "OPENAI_API_KEY");
    CHECK(j["network"]["allowed"][0]["source"] == "sandbox.allowed_domains in c.json");
    CHECK_FALSE(j["network"].contains("session_allowances"));
}
