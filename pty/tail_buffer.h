#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace caretz {

// The last `limit` bytes of everything appended, however much that is. Amortised: the bytes
// grow to twice the limit before the oldest are dropped, so an append costs about its own copy.
class TailBuffer {
public:
    explicit TailBuffer(size_t limit) : limit_(limit) {}

    void append(std::string_view bytes) {
        data_.append(bytes);
        if (data_.size() > 2 * limit_) data_.erase(0, data_.size() - limit_);
    }
    std::string_view view() const {
        std::string_view all = data_;
        return all.size() > limit_ ? all.substr(all.size() - limit_) : all;
    }

private:
    size_t limit_;
    std::string data_;
};

}  // namespace caretz
