#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent/acp_approver.h"
#include "agent/acp_connection.h"
#include "agent/acp_server.h"
#include "agent/agent.h"
#include "agent/command_runner.h"
#include "agent/model_client.h"
#include "agent/transcript.h"
#include "agent/turn_view.h"
#include "pty/output_capture.h"

namespace caretz {

// One ACP session: its own sandbox, model client, transcript and main agent, like a REPL
// session, with the turn shown to the client as session/update notifications.
class AcpSession : public TurnListener, public AcpTurn {
public:
    // A conversation session/load goes on with: its id and transcript, held by this process.
    struct Loaded {
        std::string session_id;
        std::string transcript_path;
        TranscriptLock lock;
        Conversation conversation;
    };

    // A new conversation, or with `loaded` the earlier one, in a new sandbox session with no
    // allowances (as --continue).
    AcpSession(const AcpConfig& config, AcpConnection& connection, const SandboxSpec& spec,
               CommandPipeline::Options options, std::optional<Loaded> loaded = std::nullopt);
    AcpSession(const AcpSession&) = delete;
    AcpSession& operator=(const AcpSession&) = delete;

    const std::string& id() const { return id_; }

    ~AcpSession() override;

    // How a turn ended: the stop reason ("end_turn" or "cancelled"), or why the model could
    // not answer.
    struct Result {
        std::string stop_reason;
        std::string error;
    };
    using Done = std::function<void(const Result&)>;
    // Starts a turn on the session's thread and returns at once; `done` hears how it ended,
    // on that thread. False while a turn runs. A cancel that follows at once finds the turn.
    bool start_turn(std::string prompt, Done done);
    // session/cancel: stops the model's stream and the running command, and withdraws a
    // waiting permission request. Any thread.
    void cancel();

    std::string current_tool_call() const override { return current_tool_call_; }
    bool cancelled() const override { return cancelled_; }
    int stop_fd() const override { return stop_read_; }

    void answer(std::string_view text) override;
    void command_started(const std::string& command, bool background) override;
    void command_output(std::string_view bytes) override;
    void command_finished(bool succeeded, const std::string& result) override;

    // session/load: the conversation so far, as the client would have seen it live (the
    // user's and the model's messages, each tool call with its result).
    void replay_to_client();

private:
    void serve_turns();
    Result run_turn(const std::string& prompt);

    const AcpConfig& config_;
    AcpConnection& connection_;
    std::string id_;
    std::optional<TranscriptLock> lock_;  // a loaded conversation's
    std::atomic<bool> cancelled_{false};
    std::mutex turn_mutex_;  // guards what follows, up to the pipe
    std::condition_variable turn_changed_;
    bool busy_ = false;
    bool closing_ = false;
    std::string prompt_;
    Done done_;
    // The turn's stop signal: Caretz writes Ctrl-C (0x03) into the pipe, and the agent watches
    // its read end as it watches a terminal for Ctrl-C (TurnInterrupt), so the model's stream
    // and the sandboxed command stop the way they do in the REPL.
    int stop_read_ = -1;
    int stop_write_ = -1;
    int tool_calls_ = 0;
    // Only touched by the turn's thread: the running command's tool call, and its output so
    // far with the time it was last shown.
    std::string current_tool_call_;
    std::optional<OutputCapture> live_output_;
    std::chrono::steady_clock::time_point output_shown_;
    AcpApprover approver_;
    CommandRunner commands_;
    ModelClient model_;
    Transcript transcript_;
    AgentServices services_;
    Agent agent_;
    // Every turn runs on this one thread: the sandbox a turn opens dies with the thread that
    // started it (bwrap's --die-with-parent follows the thread), so it must outlive turns.
    std::thread thread_;
};

}  // namespace caretz
