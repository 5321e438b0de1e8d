#include "agent/agent.h"

#include "agent/system_prompt.h"
#include "agent/tools.h"

namespace caretz {

namespace {

// Requests per turn before Caretz stops a model that keeps calling tools.
constexpr int kMainAgentSteps = 100;
constexpr int kSubagentSteps = 50;

constexpr const char* kNotRun = "error: not run: the user stopped the turn with Ctrl-C";

nlohmann::json calls_json(const std::vector<ToolCall>& calls) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : calls)
        list.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    return list;
}

}  // namespace

Agent::Agent(AgentServices& services, TurnView view, Kind kind, std::string name)
    : services_(services), view_(std::move(view)), kind_(kind), name_(std::move(name)) {}

void Agent::record(nlohmann::json entry) {
    entry["agent"] = name_;
    services_.transcript.record(std::move(entry));
}

TurnOutcome Agent::run_turn(const std::string& prompt, bool plan_mode, TurnInterrupt& interrupt) {
    conversation_.push_back({Message::Role::user, prompt, {}, {}});
    record({{"type", "user"}, {"text", prompt}, {"plan_mode", plan_mode}});
    PromptFacts facts = services_.facts;
    facts.plan_mode = plan_mode;
    facts.subagent = kind_ == Kind::subagent;
    const std::vector<ToolSpec> tools = agent_tools(kind_ == Kind::main);

    const int steps = kind_ == Kind::main ? kMainAgentSteps : kSubagentSteps;
    for (int step = 0; step < steps && !interrupt.check(); ++step) {
        ModelResult result = services_.model.ask(
            system_prompt(facts), conversation_, tools,
            [this](std::string_view text) { view_.answer(text); },
            [this](const std::string& line) { view_.notice(line); }, interrupt);
        view_.end_answer();
        if (result.interrupted) {
            keep_reply({result.reply.text, {}}, true);
            break;
        }
        if (!result.ok()) return failed(result.error);
        keep_reply(result.reply, false);
        if (result.reply.tool_calls.empty()) return TurnOutcome{result.reply.text, "", false};
        if (run_tool_calls(result.reply.tool_calls, plan_mode, interrupt)) break;
    }
    if (!interrupt.requested())
        return failed("the model called tools " + std::to_string(steps) +
                      " times without answering; stopped this turn");
    if (kind_ == Kind::main) view_.notice("stopped (Ctrl-C)");
    record({{"type", "interrupted"}});
    return TurnOutcome{"", "", true};
}

// What the model said becomes part of the conversation; text cut short by Ctrl-C too, so the
// model knows what the user saw.
void Agent::keep_reply(const AssistantReply& reply, bool interrupted) {
    if (interrupted && reply.text.empty()) return;
    conversation_.push_back({Message::Role::assistant, reply.text, reply.tool_calls, {}});
    record({{"type", "assistant"},
            {"text", reply.text},
            {"tool_calls", calls_json(reply.tool_calls)},
            {"interrupted", interrupted}});
}

TurnOutcome Agent::failed(const std::string& error) {
    view_.notice(error);
    record({{"type", "error"}, {"text", error}});
    return TurnOutcome{"", error, false};
}

bool Agent::run_tool_calls(const std::vector<ToolCall>& calls, bool plan_mode,
                           TurnInterrupt& interrupt) {
    const CommandSource source =
        kind_ == Kind::main ? CommandSource::model : CommandSource::subagent;
    ToolRunner::Subagent subagent;
    if (kind_ == Kind::main)
        subagent = [&](const std::string& prompt) {
            return run_subagent(prompt, plan_mode, interrupt);
        };
    ToolRunner runner(services_, view_, source, subagent);
    bool stop = false;
    for (const auto& call : calls) {
        ToolOutcome result;
        if (stop) {
            result.content = kNotRun;
            result.record = {{"ran", "none"}, {"error", "interrupted"}};
        } else {
            result = runner.run(call, plan_mode, interrupt);
            // check(), not requested(): a stop that came while nothing watched the input (an
            // offer was open) must keep the next call from running.
            stop = result.interrupted || interrupt.check();
        }
        conversation_.push_back({Message::Role::tool, result.content, {}, call.id});
        nlohmann::json entry = result.record;
        entry["type"] = "tool_result";
        entry["tool_call_id"] = call.id;
        entry["tool"] = call.name;
        entry["result"] = result.content;
        record(std::move(entry));
    }
    return stop;
}

ToolOutcome Agent::run_subagent(const std::string& prompt, bool plan_mode,
                                TurnInterrupt& interrupt) {
    int number = ++services_.subagents_started;
    Agent subagent(services_, view_.for_subagent(number), Kind::subagent,
                   "subagent " + std::to_string(number));
    TurnOutcome sub = subagent.run_turn(prompt, plan_mode, interrupt);
    ToolOutcome out;
    out.interrupted = sub.interrupted;
    out.record = {{"ran", "none"}, {"subagent", number}};
    if (sub.ok()) {
        out.content = sub.answer.empty() ? "(the subagent finished without an answer)" : sub.answer;
    } else {
        out.content =
            "error: the subagent did not finish: " +
            (sub.interrupted ? std::string("the user stopped it with Ctrl-C") : sub.error);
    }
    return out;
}

}  // namespace caretz
