#include "escalation/offer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "pty/fd_io.h"

namespace caretz {

namespace {

// Decodes one UTF-8 character at `i`; returns its code point and length (1 for a bad byte).
std::pair<char32_t, size_t> decode_utf8(std::string_view s, size_t i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return {0xFFFD, 1};
    char32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
    for (size_t k = 1; k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(s[i + k]);
        if ((cc >> 6) != 2) return {0xFFFD, 1};
        cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms (C0 9B is ESC's CSI), surrogates and code points past U+10FFFF are not
    // UTF-8: show their bytes escaped.
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return {0xFFFD, 1};
    return {cp, len};
}

// Characters that change how the text around them looks without being seen themselves.
bool invisible_or_directional(char32_t cp) {
    return (cp >= 0x80 && cp < 0xA0) || cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF ||
           cp == 0xFFFD;
}

}  // namespace

std::string shown_escaped(std::string_view text) {
    std::string out;
    char buf[16];
    for (size_t i = 0; i < text.size();) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            switch (c) {
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                case 0x1b: out += "\\e"; break;
                case '\\': out += "\\\\"; break;
                default:
                    if (c < 0x20 || c == 0x7f) {
                        std::snprintf(buf, sizeof buf, "\\x%02x", c);
                        out += buf;
                    } else {
                        out += static_cast<char>(c);
                    }
            }
            ++i;
            continue;
        }
        auto [cp, len] = decode_utf8(text, i);
        if (invisible_or_directional(cp)) {
            if (cp == 0xFFFD && len == 1) {
                std::snprintf(buf, sizeof buf, "\\x%02x", c);
            } else {
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
            }
            out += buf;
        } else {
            out.append(text.substr(i, len));
        }
        i += len;
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
            const char* names[] = {"allow once", "allow for session", "", "deny"};
            terminal.write(std::string(names[static_cast<int>(*d)]) + "\r\n");
            return *d;
        }
    }
}

}  // namespace caretz
