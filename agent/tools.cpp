#include "agent/tools.h"

namespace caretz {

namespace {

using nlohmann::json;

json job_id_parameters() {
    return {{"type", "object"},
            {"properties",
             {{"job_id",
               {{"type", "integer"}, {"description", "The id `shell` gave the background job."}}}}},
            {"required", {"job_id"}}};
}

std::string tool_names(bool with_task) {
    return with_task ? "shell, job_output, job_kill, task" : "shell, job_output, job_kill";
}

}  // namespace

std::vector<ToolSpec> agent_tools(bool with_task) {
    std::vector<ToolSpec> tools = {
        {"shell",
         "Runs a command with the user's shell in the sandbox and returns its exit status and "
         "output. With background set to true it starts the command as a background job and "
         "returns the job's id at once.",
         {{"type", "object"},
          {"properties",
           {{"command", {{"type", "string"}, {"description", "The command line to run."}}},
            {"background",
             {{"type", "boolean"},
              {"description",
               "Run as a background job (servers, watchers, long builds); read its output "
               "later with job_output."}}}}},
          {"required", {"command"}}}},
        {"job_output", "Returns a background job's state and its output so far.",
         job_id_parameters()},
        {"job_kill", "Stops a background job.", job_id_parameters()},
    };
    if (with_task) {
        tools.push_back(
            {"task",
             "Starts a subagent with its own conversation to carry out a self-contained task "
             "and returns its final answer. It shares the sandbox with you but sees nothing of "
             "this conversation, so the prompt must say everything it needs.",
             {{"type", "object"},
              {"properties",
               {{"prompt", {{"type", "string"}, {"description", "The complete task."}}}}},
              {"required", {"prompt"}}}});
    }
    return tools;
}

ParsedToolCall parse_tool_call(const ToolCall& call, bool with_task) {
    ParsedToolCall parsed;
    const bool known = call.name == "shell" || call.name == "job_output" ||
                       call.name == "job_kill" || (with_task && call.name == "task");
    if (!known) {
        parsed.error =
            "there is no tool named \"" + call.name + "\"; the tools are " + tool_names(with_task);
        return parsed;
    }
    json args = json::parse(call.arguments.empty() ? "{}" : call.arguments, nullptr, false);
    if (args.is_discarded() || !args.is_object()) {
        parsed.error =
            "its arguments are not a valid JSON object: " + call.arguments.substr(0, 200);
        return parsed;
    }
    if (call.name == "shell") {
        if (!args.contains("command") || !args["command"].is_string() ||
            args["command"].get<std::string>().find_first_not_of(" \t\n") == std::string::npos) {
            parsed.error = "shell needs \"command\": a non-empty string";
            return parsed;
        }
        parsed.command = args["command"].get<std::string>();
        if (args.contains("background") && !args["background"].is_null()) {
            if (!args["background"].is_boolean()) {
                parsed.error = "shell's \"background\" must be true or false";
                return parsed;
            }
            parsed.background = args["background"].get<bool>();
        }
    } else if (call.name == "task") {
        if (!args.contains("prompt") || !args["prompt"].is_string() ||
            args["prompt"].get<std::string>().empty()) {
            parsed.error = "task needs \"prompt\": a non-empty string";
            return parsed;
        }
        parsed.prompt = args["prompt"].get<std::string>();
    } else {
        const json id = args.contains("job_id") ? args["job_id"] : json();
        if (id.is_number_integer()) {
            parsed.job_id = id.get<int>();
        } else if (id.is_string() && !id.get<std::string>().empty() &&
                   id.get<std::string>().find_first_not_of("0123456789") == std::string::npos &&
                   id.get<std::string>().size() < 9) {
            parsed.job_id = std::stoi(id.get<std::string>());
        } else {
            parsed.error = call.name + " needs \"job_id\": the number shell gave the job";
        }
    }
    return parsed;
}

}  // namespace caretz
