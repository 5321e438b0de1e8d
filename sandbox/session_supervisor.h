#pragma once

namespace caretz {

// The session supervisor: `caretz __supervise`, run by bwrap as the sandbox's long-lived
// process. It owns a PTY inside the sandbox, keeps the session shell (and later background
// jobs) on it, and relays between that PTY and Caretz over the control socket on fd 3.
// It holds the sandbox's private /tmp for the whole session. Returns the exit status.
int run_session_supervisor();

// The control socket's descriptor inside the sandbox.
constexpr int kSupervisorControlFd = 3;

}  // namespace caretz
