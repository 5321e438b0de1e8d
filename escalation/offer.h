#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escalation/decision.h"
#include "escalation/refusal.h"
#include "pty/terminal.h"

namespace caretz {

// `text` with every control character, escape sequence, byte that is not UTF-8 and character
// the screen would not show for what it is (needs_visible_escape: direction controls, tags,
// blank letters, ...) shown as a visible escape (\e, \r, \n, \x07, \xff, \u202e,
// \U000e0001), so a command cannot disguise itself on the screen.
std::string shown_escaped(std::string_view text);

// The first line of the offer, wherever it is shown.
inline constexpr std::string_view kOfferHeading = "The sandbox refused this command:";

// The offer's body under the heading, the same on every front end: what was refused (with
// evidence), the command in full, the cwd it will run in, and the reminder that the sandboxed
// attempt already ran.
std::string offer_details(const std::string& command, const std::string& cwd,
                          const std::vector<Refusal>& refusals);

// The offer as the user reads it on the terminal: what was refused (with evidence), the command in
// full, the cwd it will run in, the reminder that the sandboxed attempt already ran, and the
// choices. The model's stated reason is deliberately absent: the user judges the command itself.
std::string offer_text(const std::string& command, const std::string& cwd,
                       const std::vector<Refusal>& refusals);

// The choice a key makes, if any: o, s, d; Enter and Esc deny.
std::optional<Decision> decision_for_key(std::string_view key);

// Asks on the terminal (already in raw mode): resets what streamed output may have changed
// (colours, cursor, alternate screen), drops typeahead so nothing typed earlier answers, shows
// the offer and reads the answer. Returns Decision::timeout once `timeout` passes unanswered,
// and deny when the terminal's input closes.
Decision ask_on_terminal(Terminal& terminal, const std::string& text,
                         std::optional<std::chrono::seconds> timeout);

}  // namespace caretz
