#pragma once

#include <string_view>

namespace caretz {

// How an offer ended (DESIGN.md section 9), as the audit log and `--json` name it.
// config_allowance: a standing rule (sandbox_off.always_allow) answered it without asking.
enum class Decision {
    allow_once,
    allow_session,
    session_allowance,
    config_allowance,
    deny,
    timeout,
    nobody_to_ask
};

constexpr std::string_view to_string(Decision d) {
    switch (d) {
        case Decision::allow_once:
            return "allow_once";
        case Decision::allow_session:
            return "allow_session";
        case Decision::session_allowance:
            return "session_allowance";
        case Decision::config_allowance:
            return "config_allowance";
        case Decision::deny:
            return "deny";
        case Decision::timeout:
            return "timeout";
        case Decision::nobody_to_ask:
            return "nobody_to_ask";
    }
    return "deny";
}

constexpr bool runs_on_host(Decision d) {
    return d == Decision::allow_once || d == Decision::allow_session ||
           d == Decision::session_allowance || d == Decision::config_allowance;
}

}  // namespace caretz
