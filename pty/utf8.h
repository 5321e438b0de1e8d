#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace caretz {

// The tree's one UTF-8 decoder, for everything that puts text on the terminal: the offer, the
// line editor, the model's text and the screen that output is rendered on. Pure; Unicode's
// tables come from utf8proc, so no answer depends on the locale.

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

}  // namespace caretz
