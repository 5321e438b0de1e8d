#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace caretz {

// Frames between Caretz and the session supervisor inside the sandbox, over one stream
// socket: a type byte, a 32-bit little-endian length, then the payload.
enum class Frame : char {
    output = 'O',        // supervisor -> Caretz: bytes the session shell's PTY produced
    shell_exited = 'X',  // supervisor -> Caretz: the shell ended; payload is its exit status
    input = 'I',         // Caretz -> supervisor: bytes typed into the session shell's PTY
    run = 'R',           // Caretz -> supervisor: payload "T" or "N" (stdin terminal or
                         //   /dev/null) followed by the command text
    resize = 'W',        // Caretz -> supervisor: "ROWSxCOLS"
    restart = 'S',       // Caretz -> supervisor: start a fresh shell in the payload's cwd
};

// Writes one frame; false when the peer is gone.
bool send_frame(int fd, Frame type, std::string_view payload);

// Splits a byte stream into frames.
class FrameReader {
public:
    struct Message {
        Frame type;
        std::string payload;
    };

    // Reads what is available from `fd` (one read call). False on EOF or error.
    bool read_from(int fd);
    // The next complete frame, if one has arrived.
    std::optional<Message> next();

private:
    std::string buffer_;
    size_t consumed_ = 0;
};

}  // namespace caretz
