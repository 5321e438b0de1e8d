#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escalation/decision.h"
#include "escalation/refusal.h"
#include "pty/terminal.h"
#include "sandbox/change_record.h"

namespace caretz {

// `text` with every control character, escape sequence, byte that is not UTF-8 and character
// the screen would not show for what it is (needs_visible_escape: direction controls, tags,
// blank letters, ...) shown as a visible escape (\e, \r, \n, \x07, \xff, \u202e,
// \U000e0001), so a command cannot disguise itself on the screen.
std::string shown_escaped(std::string_view text);

// The first line of the offer, wherever it is shown.
inline constexpr std::string_view kOfferHeading = "The sandbox refused this command:";

// What the sandbox-off offer puts before the user.
struct SandboxOffOffer {
    std::string command;
    std::string cwd;
    std::vector<Refusal> refusals;
    // What the sandboxed attempt changed in the writable roots; nullopt when it was not
    // recorded. Paths in `workspace` are shown relative to it.
    std::optional<ChangeList> changed;
    std::string workspace;
};

// How many paths the offer lists by name; the rest it counts.
inline constexpr size_t kChangesShown = 10;

// What the sandboxed attempt already changed, as the offer says it: the count and the
// kChangesShown shortest paths (escaped, relative to `workspace` where they lie in it), then how
// many more; that it changed nothing; or, where changes may be missing, that the list may be
// incomplete and why (never that nothing changed). Without a record, the reminder to check.
std::string changes_text(const std::optional<ChangeList>& changed, const std::string& workspace);

// `n` with its thousands grouped by commas: 4990 -> "4,990".
std::string grouped(uint64_t n);

// The offer's body under the heading, the same on every front end: what was refused (with
// evidence), the command in full, the cwd it will run in, and what the sandboxed attempt,
// which already ran, changed (changes_text).
std::string offer_details(const SandboxOffOffer& offer);

// The offer as the user reads it on the terminal: offer_details() and the choices. The model's
// stated reason is deliberately absent: the user judges the command itself.
std::string offer_text(const SandboxOffOffer& offer);

// The choice a key makes, if any: o, s, d; Enter and Esc deny.
std::optional<Decision> decision_for_key(std::string_view key);

// Asks on the terminal (already in raw mode): resets what streamed output may have changed
// (colours, cursor, alternate screen), drops typeahead so nothing typed earlier answers, shows
// the offer and reads the answer. Returns Decision::timeout once `timeout` passes unanswered,
// and deny when the terminal's input closes.
Decision ask_on_terminal(Terminal& terminal, const std::string& text,
                         std::optional<std::chrono::seconds> timeout);

}  // namespace caretz
