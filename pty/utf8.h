#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace caretz {

// The tree's one UTF-8 decoder, for everything that puts text on the terminal: the offer, the
// line editor, the model's text and the screen that output is rendered on; and its one answer
// to "does the screen show what this character is?". Pure; Unicode's tables come from
// utf8proc, so no answer depends on the locale.

// One character of UTF-8 text as decode_utf8 finds it.
struct Utf8Char {
    char32_t code_point;  // U+FFFD when not valid
    size_t length;        // the bytes it takes: 1 for a byte that starts no valid character
    bool valid;
};

// The character at `pos` (< text.size()). A byte that starts no well-formed character decodes
// alone, as not valid: a stray continuation byte, a cut-off sequence, an overlong form (C0 9B
// would be CSI in disguise), a surrogate, a code point past U+10FFFF.
Utf8Char decode_utf8(std::string_view text, size_t pos);

// The bytes a character that starts with `lead` takes, or 0 when `lead` starts none.
size_t utf8_sequence_length(unsigned char lead);

bool is_utf8_continuation(unsigned char byte);

// How many bytes at the end of `text` begin a character that more bytes could still complete
// (0 when none), so text that arrives in chunks can wait for the rest.
size_t utf8_incomplete_tail(std::string_view text);

// `text` with each byte that is not part of a valid character replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

// Columns the character takes on a terminal: 0 (combining marks, zero-width characters), 1
// or 2 (East Asian wide characters, emoji).
int display_width(char32_t code_point);

// Whether the terminal would not show what the character is, so that text holding it could
// look like other text: controls (Cc), format characters such as direction overrides, U+061C
// and the tags U+E0000..U+E007F (Cf), private use (Co), surrogates (Cs), unassigned code
// points (Cn, as of utf8proc's Unicode version), line and paragraph separators (Zl, Zp),
// spaces other than U+0020 (Zs: no shell splits words on them), every default-ignorable code
// point (which covers the blank Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, variation
// selectors and the combining grapheme joiner), the symbols drawn blank that no property
// names (U+2800 BRAILLE PATTERN BLANK, U+1D159 MUSICAL SYMBOL NULL NOTEHEAD, U+16FE4 KHITAN
// SMALL SCRIPT FILLER), and U+FFFD, which a terminal also draws for bytes it cannot decode.
bool needs_visible_escape(char32_t code_point);

// The escape that shows a code point: "\u202e", or "\U000e0001" past U+FFFF, so the digits
// that follow can never be read as part of it.
std::string code_point_escape(char32_t code_point);

}  // namespace caretz
