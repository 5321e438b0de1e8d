#include "escalation/offer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "pty/fd_io.h"
#include "pty/utf8.h"

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

std::string offer_details(const std::string& command, const std::string& cwd,
                          const std::vector<Refusal>& refusals) {
    std::string t;
    for (const auto& r : refusals) {
        t += "  " + std::string(to_string(r.kind)) + ": " + shown_escaped(r.subject) + "\n";
        if (!r.origin.empty()) t += "      (" + shown_escaped(r.origin) + ")\n";
        t += "      " + shown_escaped(r.evidence) + "\n";
    }
    t += "\n  command: " + shown_escaped(command) + "\n";
    t += "  in:      " + shown_escaped(cwd) + "\n\n";
    t += "The sandboxed attempt already ran: check for partial side effects.\n";
    return t;
}

std::string offer_text(const std::string& command, const std::string& cwd,
                       const std::vector<Refusal>& refusals) {
    std::string t = "\n\x1b[1m" + std::string(kOfferHeading) + "\x1b[0m\n";
    t += offer_details(command, cwd, refusals);
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
