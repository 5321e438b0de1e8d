#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "escalation/approver.h"
#include "escalation/audit_log.h"
#include "escalation/decision.h"
#include "escalation/host_probe.h"
#include "escalation/refusal.h"
#include "escalation/session_allowances.h"
#include "sandbox/network/network_proxy.h"
#include "sandbox/sandbox.h"

namespace caretz {

// Who wrote a command, and so whether its refusals may open the offer.
enum class CommandSource { user, model, subagent, background };

struct CommandRequest {
    std::string command;
    CommandSource source = CommandSource::user;
    bool plan_mode = false;
};

// What one command came to, for the screen, `--json` and the model.
struct CommandOutcome {
    int exit_code = 0;
    std::string output;  // rendered text: bounded head and tail
    std::string cwd;
    bool ran_on_host = false;
    bool shell_exited = false;
    std::vector<Refusal> refusals;
    std::optional<Decision> decision;  // nullopt when nothing was decided
    // What the sandboxed attempt changed in the writable roots: recorded when an offer could
    // follow (Options::ask_sandbox_off), else nullopt.
    std::optional<ChangeList> changed;
};

// One command's journey (DESIGN.md section 3): a session allowance, or the sandbox; then
// refusal detection; then, when the user may be asked, a standing rule or the offer; the audit
// line; the rerun.
class CommandPipeline {
public:
    struct Options {
        bool ask_sandbox_off = false;
        // Standing rules: exact command texts that rerun outside once the sandbox refused them,
        // wherever an offer could be made, without asking (sandbox_off.always_allow).
        std::set<std::string> always_allow;
        std::string session_id;
        std::string shell;
        std::string audit_path;
        bool audit_syslog = false;  // each audit line also goes to syslog
    };

    // `host` answers detection's questions about the machine outside the sandbox; `approver`
    // is the user, or nullptr when nobody can be asked (no terminal, --print), and runs an
    // approved command on the host the way its front end can. The sandbox, the host and the
    // approver are all interfaces, so the whole journey can be driven by fakes without a
    // process. The pipeline answers the sandbox's network proxy for as long as it exists.
    CommandPipeline(Sandbox& sandbox, const HostProbe& host, const SandboxSpec& spec,
                    Options options, SessionAllowances& allowances, Approver* approver);
    ~CommandPipeline();
    CommandPipeline(const CommandPipeline&) = delete;
    CommandPipeline& operator=(const CommandPipeline&) = delete;

    // Runs the request. `show` receives the output for the user's screen as it comes (the
    // sandboxed attempt's and a rerun's); `io` carries the terminal input and resizes.
    CommandOutcome run(const CommandRequest& request, const CommandIo& io);

    // Makes sure no hook or config a sandboxed command wrote into a git repository can run on
    // the host (Sandbox::secure_repositories) and tells the user, on stderr, and the audit log
    // what it did. run() does it after the sandboxed attempt and before a rerun; the front end
    // before each prompt, since background jobs go on between commands (but not right after
    // a command that ended with this check, ran nowhere else and asked nobody).
    void secure_repositories();

private:
    // The network approval (DESIGN.md section 10): the proxy asks the approver through it,
    // and every decision goes to the audit log.
    class NetworkAnswers : public NetworkApproval {
    public:
        explicit NetworkAnswers(CommandPipeline& pipeline) : pipeline_(pipeline) {}
        NetworkDecision ask(const std::string& host, uint16_t port) override;
        bool record(const std::string& host, uint16_t port, NetworkDecision decision) override;

    private:
        CommandPipeline& pipeline_;
    };

    std::string why_nobody_is_asked(const CommandRequest& request) const;
    // Writes the offer's audit line; when it cannot, says so, and nothing may run outside.
    bool audit_written(const AuditEntry& entry) const;
    // Runs the command outside the sandbox once its audit line is on disk.
    CommandOutcome run_on_host(const CommandRequest& request, const AuditEntry& entry);

    Sandbox& sandbox_;
    const HostProbe& host_;
    const SandboxSpec& spec_;
    Options options_;
    SessionAllowances& allowances_;
    Approver* approver_;
    AuditLog audit_;
    NetworkAnswers network_answers_{*this};
};

// The line of stderr that tells the user what was refused when nobody could be asked.
std::string refusal_notice(const std::vector<Refusal>& refusals, const std::string& why);

}  // namespace caretz
