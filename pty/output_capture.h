#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pty/tail_buffer.h"

namespace caretz {

// Keeps what a command printed for its result: the first and the last bytes of the output,
// however long it is, rendered as text (escape sequences interpreted) only when asked.
// Rendering with libvterm is slow next to copying, so it never happens while output streams.
class OutputCapture {
public:
    explicit OutputCapture(int columns, size_t head_bytes = 32 * 1024,
                           size_t tail_bytes = 32 * 1024);

    void append(std::string_view bytes);
    size_t total_bytes() const { return total_; }

    // The rendered head and tail; when bytes were left out between them, a line in between
    // says how many.
    std::string text() const;

private:
    int columns_;
    size_t head_limit_;
    size_t total_ = 0;
    std::string head_;
    TailBuffer tail_;
};

}  // namespace caretz
