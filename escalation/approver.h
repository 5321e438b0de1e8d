#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "escalation/decision.h"
#include "escalation/host_rerun.h"
#include "escalation/offer.h"
#include "escalation/refusal.h"

namespace caretz {

// A connection the network policy does not allow, waiting for the user.
struct NetworkRequest {
    std::string host;
    uint16_t port = 0;
};

// The user, wherever they can be asked: on the terminal, or through an ACP client. Only an
// Approver ever produces a decision that runs something outside the sandbox or lets a blocked
// destination through; nothing the model or a command writes reaches it.
class Approver {
public:
    virtual ~Approver() = default;
    // Asks whether the command may run once more, outside the sandbox. Blocks until answered.
    virtual Decision ask_sandbox_off(const SandboxOffOffer& offer) = 0;
    // Asks whether a blocked destination may be reached; called from the proxy's thread while
    // the connection waits. Returns allow_once, allow_session, deny or timeout.
    virtual Decision ask_network(const NetworkRequest& request) = 0;
    // Runs an approved command outside the sandbox, the way this front end can: on the
    // terminal, or with no terminal at all. Returns its exit status.
    virtual int rerun(const RerunCommand& command,
                      const std::function<void(std::string_view)>& on_output) = 0;
};

}  // namespace caretz
