// shown_escaped() is what stands between a command's text and the user's eyes in the offer:
// whatever the input, its output must be valid UTF-8 holding no control character (C0, DEL,
// C1), none of the invisible, direction-changing or blank characters that a hand-kept list
// once missed, and nothing else that needs_visible_escape() says the screen would hide, so the
// command cannot disguise itself. The whole offer text is checked the same way outside
// Caretz's own styling.

#include <string>
#include <string_view>

#include "escalation/offer.h"
#include "pty/utf8.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

namespace {

// Kept here as well as decided by property, so that a change to the property rule that let
// one of these through would be caught.
bool invisible_or_directional(char32_t cp) {
    return cp == 0xAD || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF ||
           (cp >= 0xE0000 && cp <= 0xE007F) || cp == 0x115F || cp == 0x1160 || cp == 0x3164 ||
           cp == 0xFFA0 || cp == 0x2800;
}

void check_shown(std::string_view shown) {
    bool clean = true;
    bool valid = fuzz::utf8_valid(shown, [&](char32_t cp) {
        if (fuzz::is_control(cp) || invisible_or_directional(cp) || needs_visible_escape(cp))
            clean = false;
    });
    require(valid, "shown_escaped() output is not valid UTF-8");
    require(clean, "shown_escaped() output holds a control or invisible character");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    std::string shown = shown_escaped(text);
    check_shown(shown);
    // Escaping is unambiguous: plain printable ASCII (no backslash) is shown as it is.
    bool plain = true;
    for (unsigned char c : text) plain = plain && c >= 0x20 && c < 0x7F && c != '\\';
    if (plain) require(shown == text, "plain ASCII was changed");

    // The offer: the command, cwd and refusal fields go in escaped; Caretz's own bold header
    // is the only escape sequence allowed.
    std::size_t half = size / 2;
    std::string command(text.substr(0, half)), cwd(text.substr(half));
    // What the attempt changed: paths a command chose, and a reason shown with them.
    ChangeList changed{
        {Change{Change::Kind::renamed, cwd + "/" + command, "/" + cwd, false}}, 2, command};
    std::string offer =
        offer_text({command, cwd, {Refusal{RefusalKind::write, cwd, command}}, changed, cwd});
    for (std::string_view styling : {"\x1b[1m", "\x1b[0m"}) {
        for (std::size_t at; (at = offer.find(styling)) != std::string::npos;)
            offer.erase(at, styling.size());
    }
    for (char& c : offer)
        if (c == '\n') c = ' ';
    check_shown(offer);
    return 0;
}
