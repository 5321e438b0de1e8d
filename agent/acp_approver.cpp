#include "agent/acp_approver.h"

#include <cstdio>

#include "escalation/offer.h"

namespace caretz {

namespace {

nlohmann::json option(const char* id, const std::string& name, const char* kind) {
    return {{"optionId", id}, {"name", name}, {"kind", kind}};
}

// The option the user chose; empty for the cancelled outcome and for an answer of any other
// shape, which must not crash Caretz and counts as no.
std::string chosen_option(const nlohmann::json& result) {
    if (!result.is_object() || !result.contains("outcome")) return "";
    const nlohmann::json& outcome = result["outcome"];
    if (!outcome.is_object() || !outcome.contains("optionId")) return "";
    if (outcome.value("outcome", nlohmann::json()) != "selected") return "";
    return outcome["optionId"].is_string() ? outcome["optionId"].get<std::string>() : "";
}

}  // namespace

AcpApprover::AcpApprover(AcpConnection& connection, std::string session_id,
                         std::optional<std::chrono::seconds> timeout, const AcpTurn& turn)
    : connection_(connection), session_id_(std::move(session_id)), timeout_(timeout), turn_(turn) {}

Decision AcpApprover::ask(nlohmann::json tool_call, nlohmann::json options) {
    std::optional<std::chrono::steady_clock::time_point> deadline;
    if (timeout_) deadline = std::chrono::steady_clock::now() + *timeout_;
    AcpConnection::Answer answer = connection_.request(
        "session/request_permission",
        {{"sessionId", session_id_}, {"toolCall", std::move(tool_call)}, {"options", options}},
        deadline, [this] { return turn_.cancelled(); });
    switch (answer.kind) {
        case AcpConnection::Answer::Kind::timeout:
            std::fputs("caretz: no answer to the permission request in time; denied\n", stderr);
            return Decision::timeout;
        case AcpConnection::Answer::Kind::result:
            break;
        default:
            // An error, a cancelled turn or a closed connection: nobody said yes.
            return Decision::deny;
    }
    const std::string choice = chosen_option(answer.result);
    if (choice == "allow_once") return Decision::allow_once;
    if (choice == "allow_session") return Decision::allow_session;
    return Decision::deny;
}

void AcpApprover::update_tool_call(const std::string& id, const std::string& status) {
    connection_.session_update(
        session_id_,
        {{"sessionUpdate", "tool_call_update"}, {"toolCallId", id}, {"status", status}});
}

Decision AcpApprover::ask_sandbox_off(const SandboxOffOffer& offer) {
    const std::string id = turn_.current_tool_call();
    std::string text{kOfferHeading};
    text += '\n';
    text += offer_details(offer);
    text +=
        "Run it again OUTSIDE the sandbox? It runs without a terminal, so sudo cannot ask for a "
        "password.\n";
    nlohmann::json tool_call = {{"toolCallId", id},
                                {"title", shown_escaped(offer.command)},
                                {"kind", "execute"},
                                {"status", "pending"},
                                {"content", acp_text_content(text)},
                                {"rawInput", {{"command", offer.command}, {"cwd", offer.cwd}}}};
    nlohmann::json options = {option("allow_once", "Allow once", "allow_once"),
                              option("allow_session", "Allow for session", "allow_always"),
                              option("deny", "Deny", "reject_once")};
    return ask(std::move(tool_call), std::move(options));
}

Decision AcpApprover::ask_network(const NetworkRequest& request) {
    const std::string id = "network-" + std::to_string(++network_requests_);
    const std::string destination =
        shown_escaped(request.host) + ":" + std::to_string(request.port);
    const std::string title = "Connect to " + destination;
    connection_.session_update(session_id_, {{"sessionUpdate", "tool_call"},
                                             {"toolCallId", id},
                                             {"title", title},
                                             {"kind", "fetch"},
                                             {"status", "pending"}});
    nlohmann::json tool_call = {
        {"toolCallId", id},
        {"title", title},
        {"kind", "fetch"},
        {"status", "pending"},
        {"content", acp_text_content("A command in the sandbox wants to connect to " + destination +
                                     ", which the network policy does not allow. The connection "
                                     "waits for your answer.\n")},
        {"rawInput", {{"host", request.host}, {"port", request.port}}}};
    nlohmann::json options = {
        option("allow_once", "Allow " + destination + " once", "allow_once"),
        option("allow_session", "Allow " + destination + " for this session", "allow_always"),
        option("deny", "Deny", "reject_once")};
    Decision decision = ask(std::move(tool_call), std::move(options));
    const bool allowed = decision == Decision::allow_once || decision == Decision::allow_session;
    update_tool_call(id, allowed ? "completed" : "failed");
    return decision;
}

int AcpApprover::rerun(const RerunCommand& command,
                       const std::function<void(std::string_view)>& on_output) {
    update_tool_call(turn_.current_tool_call(), "in_progress");
    // The editor's stop button ends the rerun too; the turn then stops as after any command.
    return rerun_without_terminal(command, on_output, turn_.stop_fd());
}

}  // namespace caretz
