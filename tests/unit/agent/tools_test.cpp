#include "agent/tools.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "agent/system_prompt.h"

using namespace caretz;

TEST_CASE("tools: shell, job_output, job_kill and task, with no way to leave the sandbox",
          "[tools]") {
    auto tools = agent_tools(true);
    std::set<std::string> names;
    for (const auto& t : tools) names.insert(t.name);
    CHECK(names == std::set<std::string>{"shell", "job_output", "job_kill", "task"});
    CHECK(agent_tools(false).size() == 3);

    const auto& shell = tools[0];
    CHECK(shell.parameters["required"] == nlohmann::json{"command"});
    std::set<std::string> params;
    for (const auto& [name, schema] : shell.parameters["properties"].items()) params.insert(name);
    CHECK(params == std::set<std::string>{"command", "background"});
    CHECK(shell.parameters["properties"]["command"]["type"] == "string");
    CHECK(shell.parameters["properties"]["background"]["type"] == "boolean");

    for (const auto& t : tools) {
        std::string all = t.description + t.parameters.dump();
        for (const char* word : {"outside", "host", "escalat", "approv", "unsandbox", "sudo"})
            CHECK(all.find(word) == std::string::npos);
    }
}

TEST_CASE("tools: the system prompt never mentions a way out of the sandbox", "[tools]") {
    for (bool plan : {false, true}) {
        for (bool sub : {false, true}) {
            // With an AGENTS.md too: what Caretz says around it must not hint at a way out.
            std::string text =
                system_prompt({"/home/u/ws", "/bin/bash", plan, sub, true,
                               sub ? "--- /etc/caretz/AGENTS.md ---\nrunbook\n" : ""});
            for (const char* word :
                 {"outside", "approv", "rerun", "escalat", "permission", "offer", "allow"})
                CHECK(text.find(word) == std::string::npos);
            CHECK(text.find("/home/u/ws") != std::string::npos);
            CHECK((text.find("Plan mode is on") != std::string::npos) == plan);
        }
    }
    CHECK(system_prompt({"/w", "/bin/sh", false, false, false, ""}).find("not available") !=
          std::string::npos);
}

TEST_CASE("tools: arguments are checked, and bad ones say what is wrong", "[tools]") {
    ParsedToolCall p =
        parse_tool_call({"1", "shell", R"({"command": "ls -la", "background": true})"}, true);
    CHECK(p.error.empty());
    CHECK(p.command == "ls -la");
    CHECK(p.background);

    p = parse_tool_call({"1", "shell", R"({"command": "ls"})"}, true);
    CHECK_FALSE(p.background);
    CHECK(parse_tool_call({"1", "job_output", R"({"job_id": 3})"}, true).job_id == 3);
    CHECK(parse_tool_call({"1", "job_kill", R"({"job_id": "4"})"}, true).job_id == 4);
    CHECK(parse_tool_call({"1", "task", R"({"prompt": "look"})"}, true).prompt == "look");

    CHECK_THAT(parse_tool_call({"1", "shell", R"({"command": "ls")"}, true).error,
               Catch::Contains("not a valid JSON object"));
    CHECK_THAT(parse_tool_call({"1", "shell", "[1]"}, true).error,
               Catch::Contains("not a valid JSON object"));
    CHECK_THAT(parse_tool_call({"1", "shell", "{}"}, true).error, Catch::Contains("\"command\""));
    CHECK_THAT(parse_tool_call({"1", "shell", R"({"command": "  "})"}, true).error,
               Catch::Contains("non-empty"));
    CHECK_THAT(
        parse_tool_call({"1", "shell", R"({"command": "ls", "background": "yes"})"}, true).error,
        Catch::Contains("true or false"));
    CHECK_THAT(parse_tool_call({"1", "job_output", R"({"job_id": "x"})"}, true).error,
               Catch::Contains("job_id"));
    CHECK_THAT(parse_tool_call({"1", "task", "{}"}, false).error,
               Catch::Contains("no tool named \"task\""));
    CHECK_THAT(parse_tool_call({"1", "run_on_host", "{}"}, true).error,
               Catch::Contains("shell, job_output, job_kill, task"));
}
