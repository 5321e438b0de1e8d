// MarkParser sees every byte the session shell's PTY produces, split wherever reads happen to
// split it. Whatever the bytes and the split: the events and passed-on output are the same as
// for one whole read, and without the nonce in the input nothing is a mark and every byte is
// passed on unchanged.

#include <string>
#include <string_view>

#include "pty/mark_parser.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

namespace {

constexpr const char* kNonce = "0123456789abcdef0123456789abcdef";

// Records output and events in order as one string; output bytes are kept as they are and
// events are tagged with a byte that marks cannot produce in that position.
class Recorder : public MarkParser::Handler {
public:
    std::string log;
    std::string output;
    int events = 0;

    void on_output(std::string_view bytes) override {
        require(!bytes.empty(), "on_output() with no bytes");
        log.append(bytes);
        output.append(bytes);
    }
    void on_prompt_start() override { event("A"); }
    void on_prompt_end() override { event("B"); }
    void on_command_start() override { event("C"); }
    void on_unread_lines(int lines) override {
        require(lines >= 0, "negative count of unread lines");
        event("U" + std::to_string(lines));
    }
    void on_command_done(int status) override {
        require(status >= 0, "negative exit status");
        event("D" + std::to_string(status));
    }
    void on_cwd(std::string path) override {
        require(!path.empty() && path[0] == '/', "cwd that is not an absolute path");
        event("7" + path);
    }

private:
    void event(const std::string& what) {
        ++events;
        log += '\0';
        log += what;
        log += '\0';
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);

    Recorder whole;
    MarkParser one(kNonce);
    one.feed(input, whole);
    one.flush(whole);

    Recorder split;
    MarkParser many(kNonce);
    for (auto chunk : fuzz::chunks(input)) many.feed(chunk, split);
    many.flush(split);
    require(whole.log == split.log, "chunked input gives other marks or output than whole input");

    if (input.find(std::string("caretz=") + kNonce) == std::string_view::npos) {
        require(whole.events == 0, "a mark without the nonce was accepted");
        require(whole.output == input, "output without marks was not passed on byte for byte");
    }
    require(whole.output.size() <= size, "more output than input");
    return 0;
}
