#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "agent/acp_connection.h"
#include "escalation/approver.h"

namespace caretz {

// What the approver learns from the session about the turn that runs.
class AcpTurn {
public:
    virtual ~AcpTurn() = default;
    // The id of the tool call whose command runs now.
    virtual std::string current_tool_call() const = 0;
    // True once the client cancelled the turn; a waiting request is then withdrawn (the
    // connection is woken when it turns true).
    virtual bool cancelled() const = 0;
    // Turns readable when the turn is cancelled; -1 between turns.
    virtual int stop_fd() const = 0;
};

// The user behind an ACP client: an offer becomes a `session/request_permission` about the
// tool call of the refused command, with the options Allow once (allow_once), Allow for session
// (allow_always) and Deny (reject_once); an approved rerun runs without a terminal. Safe to
// call from any thread (the network proxy asks from its own).
class AcpApprover : public Approver {
public:
    AcpApprover(AcpConnection& connection, std::string session_id,
                std::optional<std::chrono::seconds> timeout, const AcpTurn& turn);

    Decision ask_sandbox_off(const SandboxOffOffer& offer) override;
    Decision ask_network(const NetworkRequest& request) override;
    int rerun(const RerunCommand& command,
              const std::function<void(std::string_view)>& on_output) override;

private:
    // Sends the request about `tool_call` and waits for the user's choice among `options`
    // (each with the optionId allow_once, allow_session or deny).
    Decision ask(nlohmann::json tool_call, nlohmann::json options);
    void update_tool_call(const std::string& id, const std::string& status);

    AcpConnection& connection_;
    std::string session_id_;
    std::optional<std::chrono::seconds> timeout_;
    const AcpTurn& turn_;
    std::atomic<int> network_requests_{0};
};

}  // namespace caretz
