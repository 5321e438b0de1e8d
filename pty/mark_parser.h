#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace caretz {

// Finds the session hooks' marks in the session shell's PTY output. The wire format, shared
// with hooks/bash, hooks/zsh and hooks/fish (ESC = 0x1b, BEL = 0x07; ST = ESC \ is accepted in
// place of BEL):
//
//   ESC ] 133 ; A ; caretz=NONCE BEL             a prompt starts
//   ESC ] 133 ; B ; caretz=NONCE BEL             the prompt ends: the shell reads input
//   ESC ] 133 ; C ; caretz=NONCE BEL             a command starts
//   ESC ] 133 ; U ; LINES ; caretz=NONCE BEL     LINES whole lines typed while the command ran
//                                                were still unread when it ended (before D)
//   ESC ] 133 ; D ; STATUS ; caretz=NONCE BEL    the command ended with exit status STATUS
//   ESC ] 7 ; file://HOST/PATH ; caretz=NONCE BEL
//                                                the shell's cwd; PATH is percent-encoded;
//                                                sent when it changed: at a shell's first
//                                                prompt and before D (a command is over at D)
//
// NONCE is the session's secret, known only to an unexported shell variable, so a command's
// output cannot forge a mark. Anything that is not a well-formed mark with the right nonce
// (another nonce, none, garbage, an unterminated or over-long sequence) is ordinary output and
// is passed on byte for byte. Marks may be split across reads.
class MarkParser {
public:
    class Handler {
    public:
        virtual ~Handler() = default;
        // Every byte that is not part of a mark, in order.
        virtual void on_output(std::string_view bytes) = 0;
        virtual void on_prompt_start() {}
        virtual void on_prompt_end() {}
        virtual void on_command_start() {}
        virtual void on_unread_lines(int /*lines*/) {}
        virtual void on_command_done(int /*status*/) {}
        virtual void on_cwd(std::string /*path*/) {}
    };

    // An escape sequence longer than this is not a mark; it is passed on as output.
    static constexpr size_t kMaxMarkSize = 8192;

    // Throws std::invalid_argument for an empty nonce, which would let anything through.
    explicit MarkParser(std::string nonce);

    void feed(std::string_view bytes, Handler& handler);

    // Passes on the bytes held back because they might have started a mark, e.g. when the
    // shell's output ends.
    void flush(Handler& handler);

private:
    bool take(unsigned char c, Handler& handler);
    void finish(char terminator, Handler& handler);

    std::string nonce_tag_;
    // Bytes from an ESC on, held while they may still turn out to be a mark.
    std::string pending_;
};

// The command-start mark exactly as the hooks write it for `nonce` (with BEL).
std::string command_start_mark(std::string_view nonce);

}  // namespace caretz
