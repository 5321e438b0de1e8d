#include "escalation/offer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "pty/fd_io.h"
#include "pty/utf8.h"
#include "sandbox/policy.h"

namespace caretz {

namespace {

// The escapes a shell user reads at a glance; other C0 controls and DEL show as \xNN.
std::string_view named_escape(char32_t code_point) {
    switch (code_point) {
        case '\n':
            return "\\n";
        case '\r':
            return "\\r";
        case '\t':
            return "\\t";
        case 0x1b:
            return "\\e";
        case '\\':
            return "\\\\";
        default:
            return {};
    }
}

std::string byte_escape(unsigned char byte) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", byte);
    return buf;
}

}  // namespace

std::string shown_escaped(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size();) {
        const Utf8Char c = decode_utf8(text, i);
        if (!c.valid) {
            out += byte_escape(static_cast<unsigned char>(text[i]));
        } else if (auto named = named_escape(c.code_point); !named.empty()) {
            out += named;
        } else if (c.code_point < 0x20 || c.code_point == 0x7f) {
            out += byte_escape(static_cast<unsigned char>(c.code_point));
        } else if (needs_visible_escape(c.code_point)) {
            out += code_point_escape(c.code_point);
        } else {
            out.append(text.substr(i, c.length));
        }
        i += c.length;
    }
    return out;
}

std::string grouped(uint64_t n) {
    std::string digits = std::to_string(n);
    for (size_t at = digits.size(); at > 3; at -= 3) digits.insert(at - 3, ",");
    return digits;
}

std::string changes_text(const std::optional<ChangeList>& changed, const std::string& workspace) {
    if (!changed) return "The sandboxed attempt already ran: check for partial side effects.\n";
    auto shown = [&](const std::string& path, bool folder) {
        std::string text = path;
        if (path_within(path, workspace) && path != workspace)
            text = path.substr(workspace == "/" ? 1 : workspace.size() + 1);
        return shown_escaped(text) + (folder ? "/" : "");
    };
    bool outside = false;
    for (const auto& c : changed->kept)
        outside = outside || !path_within(c.path, workspace) ||
                  (!c.from.empty() && !path_within(c.from, workspace));
    const std::string where = outside ? "in the folders it may write" : "in the workspace";
    const std::string why = changed->incomplete.empty() ? "" : shown_escaped(changed->incomplete);
    if (changed->count == 0 && why.empty())
        return "The sandboxed attempt already ran. It changed nothing " + where + ".\n";
    if (changed->count == 0)
        return "The sandboxed attempt already ran. Caretz saw no change " + where +
               ", but the list may be incomplete: " + why + ". Check for partial side effects.\n";
    std::string t = "The sandboxed attempt already changed " + grouped(changed->count) +
                    (changed->count == 1 ? " file " : " files ") + where + ":\n";
    size_t listed = 0;
    for (const auto& c : changed->kept) {
        if (listed == kChangesShown) break;
        std::string kind = to_string(c.kind);
        kind.resize(9, ' ');
        t += "    " + kind + shown(c.from.empty() ? c.path : c.from, c.folder);
        if (!c.from.empty()) t += " -> " + shown(c.path, c.folder);
        t += "\n";
        ++listed;
    }
    if (changed->count > listed) t += "    and " + grouped(changed->count - listed) + " more\n";
    if (!why.empty())
        t += "The list may be incomplete: " + why + ". Check for partial side effects.\n";
    return t;
}

std::string offer_details(const SandboxOffOffer& offer) {
    std::string t;
    for (const auto& r : offer.refusals) {
        t += "  " + std::string(to_string(r.kind)) + ": " + shown_escaped(r.subject) + "\n";
        if (!r.origin.empty()) t += "      (" + shown_escaped(r.origin) + ")\n";
        t += "      " + shown_escaped(r.evidence) + "\n";
    }
    t += "\n  command: " + shown_escaped(offer.command) + "\n";
    t += "  in:      " + shown_escaped(offer.cwd) + "\n\n";
    t += changes_text(offer.changed, offer.workspace);
    return t;
}

std::string offer_text(const SandboxOffOffer& offer) {
    std::string t = "\n\x1b[1m" + std::string(kOfferHeading) + "\x1b[0m\n";
    t += offer_details(offer);
    t += "Run it again OUTSIDE the sandbox, on this terminal?\n";
    t += "  [o] Allow once   [s] Allow for session   [d] Deny (default: Enter, Esc)\n";
    return t;
}

std::optional<Decision> decision_for_key(std::string_view key) {
    if (key == "o" || key == "O") return Decision::allow_once;
    if (key == "s" || key == "S") return Decision::allow_session;
    if (key == "d" || key == "D" || key == "\r" || key == "\n" || key == "\x1b")
        return Decision::deny;
    return std::nullopt;
}

Decision ask_on_terminal(Terminal& terminal, const std::string& text,
                         std::optional<std::chrono::seconds> timeout) {
    terminal.reset_for_question();
    terminal.drop_typeahead();
    terminal.write(text);
    terminal.write("choice> ");
    auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                            : std::chrono::steady_clock::time_point::max();
    while (true) {
        int wait_ms = -1;
        if (timeout) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                terminal.write("\r\ncaretz: no answer in time; denied.\r\n");
                return Decision::timeout;
            }
            wait_ms = static_cast<int>(left.count());
        }
        if (!terminal.wait_for_keys(wait_ms)) {
            if (terminal.input_closed()) return Decision::deny;
            continue;
        }
        // A whole escape sequence (an arrow key) arrives in one read: it is not Esc.
        std::string key = terminal.take_keys();
        if (key.size() > 1 && key[0] == '\x1b') continue;
        if (key.empty()) continue;
        if (auto d = decision_for_key(std::string_view(key).substr(0, 1))) {
            // decision_for_key gives only these three.
            const char* name = *d == Decision::allow_once      ? "allow once"
                               : *d == Decision::allow_session ? "allow for session"
                                                               : "deny";
            terminal.write(std::string(name) + "\r\n");
            return *d;
        }
    }
}

}  // namespace caretz
