#include "agent/acp_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <map>

#include "escalation/offer.h"
#include "pty/fd_io.h"

namespace caretz {

namespace {

// While a command runs, the editor sees the start and the latest part of its output.
constexpr size_t kLiveHead = 4 * 1024;
constexpr size_t kLiveTail = 16 * 1024;
constexpr auto kOutputInterval = std::chrono::milliseconds(500);

}  // namespace

AcpSession::AcpSession(const AcpConfig& config, AcpConnection& connection, const SandboxSpec& spec,
                       CommandPipeline::Options options, std::optional<Loaded> loaded)
    : config_(config),
      connection_(connection),
      id_(loaded ? loaded->session_id : options.session_id),
      lock_(loaded ? std::make_optional(std::move(loaded->lock)) : std::nullopt),
      approver_(connection, id_, config.permission_timeout, *this),
      commands_([spec] { return spec; }, config.fresh_per_command, options, &approver_),
      model_(config.model),
      transcript_(loaded ? Transcript(loaded->transcript_path)
                         : Transcript(config.sessions_dir + "/" + id_ + ".jsonl",
                                      transcript_header(id_, config.model, spec.cwd))),
      services_{model_,
                commands_,
                transcript_,
                PromptFacts{spec.cwd, spec.shell, false, false, !config.fresh_per_command,
                            config.instructions_for ? config.instructions_for(spec.cwd).text : ""},
                nullptr,
                0,
                ContextBudget(config.context_window, config.model.model),
                {}},
      agent_(services_, TurnView(ViewTargets{-1, STDERR_FILENO, -1, "", this}), Agent::Kind::main,
             "main"),
      thread_([this] { serve_turns(); }) {
    if (!loaded) return;
    agent_.restore(std::move(loaded->conversation));
    transcript_.record({{"type", "resumed"}, {"caretz_session", options.session_id}});
}

void AcpSession::replay_to_client() {
    // The model's call ids need not be unique across turns; the client's must be.
    std::map<std::string, std::string> shown_as;
    int calls = 0;
    auto text = [](const std::string& t) { return nlohmann::json{{"type", "text"}, {"text", t}}; };
    for (const Message& m : agent_.conversation()) {
        if (m.role == Message::Role::user) {
            connection_.session_update(
                id_, {{"sessionUpdate", "user_message_chunk"}, {"content", text(m.text)}});
        } else if (m.role == Message::Role::tool) {
            connection_.session_update(id_, {{"sessionUpdate", "tool_call_update"},
                                             {"toolCallId", shown_as[m.tool_call_id]},
                                             {"status", "completed"},
                                             {"content", acp_text_content(m.text)}});
            continue;
        }
        if (m.role != Message::Role::assistant) continue;
        if (!m.text.empty())
            connection_.session_update(
                id_, {{"sessionUpdate", "agent_message_chunk"}, {"content", text(m.text)}});
        for (const ToolCall& call : m.tool_calls) {
            shown_as[call.id] = "earlier-" + std::to_string(++calls);
            nlohmann::json arguments = arguments_object(call.arguments);
            const bool shell = arguments.contains("command") && arguments["command"].is_string();
            connection_.session_update(
                id_, {{"sessionUpdate", "tool_call"},
                      {"toolCallId", shown_as[call.id]},
                      {"title",
                       shell ? shown_escaped(arguments["command"].get<std::string>()) : call.name},
                      {"kind", shell ? "execute" : "other"},
                      {"status", "pending"},
                      {"rawInput", arguments}});
        }
    }
}

AcpSession::~AcpSession() {
    {
        std::lock_guard lock(turn_mutex_);
        closing_ = true;
    }
    turn_changed_.notify_all();
    thread_.join();
}

bool AcpSession::start_turn(std::string prompt, Done done) {
    int fds[2];
    {
        std::lock_guard lock(turn_mutex_);
        if (busy_ || ::pipe2(fds, O_CLOEXEC) != 0) return false;
        busy_ = true;
        stop_read_ = fds[0];
        stop_write_ = fds[1];
        cancelled_ = false;
        prompt_ = std::move(prompt);
        done_ = std::move(done);
    }
    turn_changed_.notify_all();
    return true;
}

void AcpSession::serve_turns() {
    std::unique_lock lock(turn_mutex_);
    while (true) {
        turn_changed_.wait(lock, [this] { return closing_ || done_; });
        if (closing_) return;
        lock.unlock();
        Result result = run_turn(prompt_);
        lock.lock();
        ::close(stop_read_);
        ::close(stop_write_);
        stop_read_ = stop_write_ = -1;
        busy_ = false;
        Done done = std::exchange(done_, nullptr);
        lock.unlock();
        done(result);
        lock.lock();
    }
}

AcpSession::Result AcpSession::run_turn(const std::string& prompt) {
    Result result;
    // Background jobs may have made a repository since the last turn's commands.
    commands_.secure_repositories();
    if (std::string problem = missing_key_problem(config_.model); !problem.empty()) {
        result.error = problem;
        return result;
    }
    // The client's cancel arrives as a Ctrl-C on this pipe, read like a terminal's keys.
    Terminal cancel(stop_read_, -1);
    services_.terminal = &cancel;
    TurnInterrupt interrupt(&cancel);
    TurnOutcome outcome = agent_.run_turn(prompt, config_.plan_mode, interrupt);
    services_.terminal = nullptr;
    if (outcome.interrupted || cancelled_) {
        result.stop_reason = "cancelled";
    } else if (!outcome.error.empty()) {
        result.error = outcome.error;
    } else {
        result.stop_reason = "end_turn";
    }
    return result;
}

void AcpSession::cancel() {
    std::lock_guard lock(turn_mutex_);
    if (!busy_) return;
    cancelled_ = true;
    write_all(stop_write_, "\x03");
    connection_.wake();
}

void AcpSession::answer(std::string_view text) {
    connection_.session_update(id_, {{"sessionUpdate", "agent_message_chunk"},
                                     {"content", {{"type", "text"}, {"text", text}}}});
}

void AcpSession::command_started(const std::string& command, bool background) {
    current_tool_call_ = "call-" + std::to_string(++tool_calls_);
    connection_.session_update(
        id_, {{"sessionUpdate", "tool_call"},
              {"toolCallId", current_tool_call_},
              {"title", shown_escaped(command) + (background ? " (background job)" : "")},
              {"kind", "execute"},
              {"status", "in_progress"},
              {"rawInput", {{"command", command}, {"background", background}}}});
    live_output_.emplace(commands_.columns(), kLiveHead, kLiveTail);
    output_shown_ = {};  // the first output shows at once
}

void AcpSession::command_output(std::string_view bytes) {
    if (!live_output_) return;
    live_output_->append(bytes);
    // Rendering and sending the output on every chunk would cost more than the command; twice
    // a second keeps the editor current.
    auto now = std::chrono::steady_clock::now();
    if (now - output_shown_ < kOutputInterval) return;
    output_shown_ = now;
    connection_.session_update(id_, {{"sessionUpdate", "tool_call_update"},
                                     {"toolCallId", current_tool_call_},
                                     {"content", acp_text_content(live_output_->text())}});
}

void AcpSession::command_finished(bool succeeded, const std::string& result) {
    live_output_.reset();
    connection_.session_update(id_, {{"sessionUpdate", "tool_call_update"},
                                     {"toolCallId", current_tool_call_},
                                     {"status", succeeded ? "completed" : "failed"},
                                     {"content", acp_text_content(result)}});
}

}  // namespace caretz
