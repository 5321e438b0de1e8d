#pragma once
// Helpers shared by the fuzz targets: chunking derived from the input itself, and the checks
// that turn a broken invariant into a crash libFuzzer reports.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace caretz::fuzz {

// Aborts with a message when an invariant fails; libFuzzer saves the input as a crash.
inline void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
        std::abort();
    }
}

// Splits `data` into chunks whose sizes (1..64) come from a small PRNG seeded by the data, so
// every input also exercises state carried across feed() calls, reproducibly.
inline std::vector<std::string_view> chunks(std::string_view data) {
    std::uint64_t state = 0xcbf29ce484222325ULL;
    for (unsigned char c : data) state = (state ^ c) * 0x100000001b3ULL;
    std::vector<std::string_view> out;
    while (!data.empty()) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        std::size_t n = 1 + (state >> 58);  // 1..64
        if (n > data.size()) n = data.size();
        out.push_back(data.substr(0, n));
        data.remove_prefix(n);
    }
    return out;
}

// True when `s` is well-formed UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF.
// Calls `each` with every code point.
template <typename F>
bool utf8_valid(std::string_view s, F each) {
    for (std::size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t len = c < 0x80         ? 1
                          : (c >> 5) == 6  ? 2
                          : (c >> 4) == 14 ? 3
                          : (c >> 3) == 30 ? 4
                                           : 0;
        if (len == 0 || i + len > s.size()) return false;
        char32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
        for (std::size_t k = 1; k < len; ++k) {
            unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc >> 6) != 2) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
        each(cp);
        i += len;
    }
    return true;
}

// C0 controls, DEL and C1 controls: what a terminal may act on instead of showing.
inline bool is_control(char32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp < 0xA0);
}

}  // namespace caretz::fuzz
