#include "app/duration.h"

#include <cctype>

namespace caretz {

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
    if (text.empty()) return std::nullopt;
    long long total = 0;
    size_t i = 0;
    while (i < text.size()) {
        long long number = 0;
        size_t digits = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
            number = number * 10 + (text[i] - '0');
            if (number > 10'000'000) return std::nullopt;
            ++i;
            ++digits;
        }
        if (digits == 0 || i == text.size()) return std::nullopt;
        switch (text[i++]) {
            case 's':
                total += number;
                break;
            case 'm':
                total += number * 60;
                break;
            case 'h':
                total += number * 3600;
                break;
            default:
                return std::nullopt;
        }
    }
    if (total <= 0) return std::nullopt;
    return std::chrono::seconds(total);
}

std::string format_duration(std::chrono::seconds duration) {
    const long long total = duration.count();
    std::string out;
    if (total >= 3600) out += std::to_string(total / 3600) + "h";
    if (total % 3600 >= 60) out += std::to_string(total % 3600 / 60) + "m";
    if (total % 60 != 0 || out.empty()) out += std::to_string(total % 60) + "s";
    return out;
}

}  // namespace caretz
