#include "pty/utf8.h"

#include <utf8proc.h>

#include <cstdio>

namespace caretz {

namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

}  // namespace

Utf8Char decode_utf8(std::string_view text, size_t pos) {
    utf8proc_int32_t code_point = -1;
    const auto length =
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data()) + pos,
                         static_cast<utf8proc_ssize_t>(text.size() - pos), &code_point);
    if (length <= 0 || code_point < 0) return {0xFFFD, 1, false};
    return {static_cast<char32_t>(code_point), static_cast<size_t>(length), true};
}

size_t utf8_sequence_length(unsigned char lead) {
    if (lead < 0x80) return 1;
    if (lead >= 0xC2 && lead <= 0xDF) return 2;
    if (lead >= 0xE0 && lead <= 0xEF) return 3;
    if (lead >= 0xF0 && lead <= 0xF4) return 4;
    return 0;
}

bool is_utf8_continuation(unsigned char byte) {
    return (byte & 0xC0) == 0x80;
}

size_t utf8_incomplete_tail(std::string_view text) {
    // A character is at most four bytes, so its start is among the last three.
    for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
        const auto byte = static_cast<unsigned char>(text[text.size() - back]);
        if (is_utf8_continuation(byte)) continue;
        return utf8_sequence_length(byte) > back ? back : 0;
    }
    return 0;
}

std::string valid_utf8(std::string_view text) {
    std::string result;
    result.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const Utf8Char c = decode_utf8(text, pos);
        if (c.valid) {
            result.append(text.substr(pos, c.length));
        } else {
            result += kReplacementCharacter;
        }
        pos += c.length;
    }
    return result;
}

int display_width(char32_t code_point) {
    return utf8proc_charwidth(static_cast<utf8proc_int32_t>(code_point));
}

bool needs_visible_escape(char32_t code_point) {
    if (code_point > 0x10FFFF) return true;
    const auto c = static_cast<utf8proc_int32_t>(code_point);
    switch (utf8proc_category(c)) {
        case UTF8PROC_CATEGORY_CC:
        case UTF8PROC_CATEGORY_CF:
        case UTF8PROC_CATEGORY_CO:
        case UTF8PROC_CATEGORY_CS:
        case UTF8PROC_CATEGORY_CN:
        case UTF8PROC_CATEGORY_ZL:
        case UTF8PROC_CATEGORY_ZP:
            return true;
        case UTF8PROC_CATEGORY_ZS:
            return code_point != U' ';
        default:
            break;
    }
    if (utf8proc_get_property(c)->ignorable) return true;
    return code_point == 0x2800 || code_point == 0x1D159 || code_point == 0x16FE4 ||
           code_point == 0xFFFD;
}

std::string code_point_escape(char32_t code_point) {
    char buf[16];
    std::snprintf(buf, sizeof buf, code_point > 0xFFFF ? "\\U%08x" : "\\u%04x",
                  static_cast<unsigned>(code_point));
    return buf;
}

}  // namespace caretz
