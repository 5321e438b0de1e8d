#include "agent/agent.h"

#include "agent/compaction.h"
#include "agent/system_prompt.h"
#include "agent/tools.h"

namespace caretz {

namespace {

// Requests per turn before Caretz stops a model that keeps calling tools.
constexpr int kMainAgentSteps = 100;
constexpr int kSubagentSteps = 50;

constexpr const char* kNotRun = "error: not run: the user stopped the turn with Ctrl-C";

// Compaction leaves the newest command results whole, whatever their size: the model is
// usually in the middle of reading them.
constexpr size_t kKeepNewestResults = 2;
// When the model cannot summarize, Caretz's own list of requests and commands is this long.
constexpr size_t kPlainSummaryBytes = 8 * 1024;
// What a summary request shows of the older conversation while the window is unknown.
constexpr size_t kSummarySourceBytes = 256 * 1024;

size_t tools_bytes(const std::vector<ToolSpec>& tools) {
    size_t bytes = 0;
    for (const auto& t : tools)
        bytes += t.name.size() + t.description.size() + t.parameters.dump().size();
    return bytes;
}

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
    const std::string system = system_prompt(facts);
    for (int step = 0; step < steps && !interrupt.check(); ++step) {
        ModelResult result = ask_model(system, tools, interrupt);
        view_.end_answer();
        if (result.interrupted) {
            keep_reply({result.reply.text, {}, {}}, true);
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

ModelResult Agent::ask_model(const std::string& system, const std::vector<ToolSpec>& tools,
                             TurnInterrupt& interrupt) {
    ContextBudget& budget = services_.budget;
    const size_t fixed = system.size() + tools_bytes(tools);
    ModelResult stopped;
    stopped.interrupted = true;
    if (budget.needs_compaction(conversation_bytes(conversation_, fixed)) &&
        !compact_conversation(fixed, Compaction::filling, "", interrupt))
        return stopped;
    for (bool retried = false;; retried = true) {
        const size_t bytes = conversation_bytes(conversation_, fixed);
        if (budget.known_too_large(bytes)) {
            ModelResult out;
            out.error =
                "even compacted, the conversation does not fit the model's context window "
                "(about " +
                std::to_string(budget.tokens(bytes)) + " tokens, the window " +
                std::to_string(budget.window()) +
                "): its latest messages alone are too large; /clear starts a new "
                "conversation in the same sandbox session, /model picks another model";
            return out;
        }
        ModelResult result = services_.model.ask(
            system, conversation_, tools, [this](std::string_view text) { view_.answer(text); },
            [this](const std::string& line) { view_.notice(line); }, interrupt);
        count_usage(result.reply.usage);
        context_tokens_ = result.reply.usage.input;
        if (context_tokens_ > 0) budget.observe(bytes, context_tokens_);
        if (!result.overflow || retried || result.interrupted) return result;
        if (result.overflow->requested > 0) budget.observe(bytes, result.overflow->requested);
        budget.refused(bytes, result.overflow->window);
        if (!compact_conversation(fixed, Compaction::refused, "", interrupt)) return stopped;
    }
}

bool Agent::compact_conversation(size_t fixed, Compaction why, const std::string& also_keep,
                                 TurnInterrupt& interrupt, std::string* why_not) {
    const ContextBudget& budget = services_.budget;
    const bool by_hand = why == Compaction::by_hand;
    const size_t before = conversation_bytes(conversation_, fixed);
    size_t target = budget.target_bytes();
    if (target == 0) target = before / 2;  // by hand, with the window still unknown
    Conversation work = conversation_;
    int shrunk = by_hand ? 0 : shrink_old_results(work, kKeepNewestResults, target, fixed);
    std::string summarized;
    if (by_hand || conversation_bytes(work, fixed) > target) {
        const size_t tail_bytes = target > fixed ? (target - fixed) / 2 : 0;
        const size_t tail_start = verbatim_tail_start(work, tail_bytes);
        if (tail_start > 0) {
            const Conversation older(work.begin(), work.begin() + static_cast<long>(tail_start));
            bool interrupted = false;
            std::optional<std::string> summary =
                summary_of(older, also_keep, interrupt, interrupted);
            if (interrupted) return false;
            work = compacted(work, tail_start,
                             summary ? *summary : plain_summary(older, kPlainSummaryBytes),
                             summary.has_value());
            summarized =
                summary ? "older turns summarized by the model" : "older turns listed by Caretz";
        }
        if (conversation_bytes(work, fixed) > target)
            shrunk += shrink_old_results(work, 1, target, fixed);
        // The model has not read the newest output yet, but a request that cannot be sent
        // shows it nothing: its last line and a rerun (now bounded smaller) will have to do.
        if (budget.needs_compaction(conversation_bytes(work, fixed)))
            shrunk += shrink_old_results(work, 0, target, fixed);
    }
    if (summarized.empty() && shrunk == 0) {
        if (why_not) *why_not = "there is nothing older to compact in this conversation";
        return true;
    }
    conversation_ = std::move(work);
    context_tokens_ = 0;
    ++services_.usage.compactions;
    record({{"type", "compaction"},
            {"conversation", conversation_json(conversation_)},
            {"by_hand", by_hand}});
    std::string what;
    if (shrunk > 0)
        what = std::to_string(shrunk) +
               (shrunk == 1 ? " old command output" : " old command outputs") + " left out";
    if (!summarized.empty()) what += (what.empty() ? "" : ", ") + summarized;
    const std::string sizes =
        "about " + std::to_string(budget.tokens(before)) + " -> " +
        std::to_string(budget.tokens(conversation_bytes(conversation_, fixed))) + " tokens (" +
        what + ")";
    const std::string window =
        "the model's context window (" + std::to_string(budget.window()) + " tokens)";
    switch (why) {
        case Compaction::filling:
            view_.notice("compacted the conversation before it outgrew " + window + ": " + sizes);
            break;
        case Compaction::refused:
            view_.notice("the request did not fit " + window + ": compacted the conversation, " +
                         sizes + ", and sent it again");
            break;
        case Compaction::by_hand:
            view_.notice("compacted the conversation: " + sizes);
            break;
    }
    return true;
}

std::optional<std::string> Agent::summary_of(const Conversation& older,
                                             const std::string& also_keep, TurnInterrupt& interrupt,
                                             bool& interrupted) {
    const size_t target = services_.budget.target_bytes();
    const Conversation request = {{Message::Role::user,
                                   summary_source(older, target > 0 ? target : kSummarySourceBytes),
                                   {},
                                   {}}};
    ModelResult result = services_.model.ask(
        summary_instruction(also_keep), request, {}, {},
        [this](const std::string& line) { view_.notice(line); }, interrupt);
    count_usage(result.reply.usage);
    interrupted = result.interrupted;
    if (interrupted) return std::nullopt;
    if (!result.ok() || result.reply.text.find_first_not_of(" \t\r\n") == std::string::npos) {
        view_.notice("the model could not summarize the older part of the conversation (" +
                     (result.ok() ? std::string("its answer was empty") : result.error) +
                     "); Caretz keeps its own list of the requests and commands instead");
        return std::nullopt;
    }
    return result.reply.text;
}

void Agent::count_usage(const TokenUsage& usage) {
    services_.usage.input += usage.input;
    services_.usage.output += usage.output;
    ++services_.usage.requests;
}

void Agent::clear() {
    conversation_.clear();
    context_tokens_ = 0;
    record({{"type", "clear"}});
}

TurnOutcome Agent::compact(const std::string& also_keep, TurnInterrupt& interrupt) {
    if (conversation_.empty()) return TurnOutcome{"", "the conversation is empty", false};
    std::string why_not;
    if (!compact_conversation(fixed_bytes(), Compaction::by_hand, also_keep, interrupt, &why_not))
        return TurnOutcome{"", "", true};
    return TurnOutcome{"", why_not, false};
}

Agent::ContextSize Agent::context_size() const {
    if (context_tokens_ > 0) return {context_tokens_, false};
    return {services_.budget.tokens(conversation_bytes(conversation_, fixed_bytes())), true};
}

size_t Agent::fixed_bytes() const {
    PromptFacts facts = services_.facts;
    facts.subagent = kind_ == Kind::subagent;
    return system_prompt(facts).size() + tools_bytes(agent_tools(kind_ == Kind::main));
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
