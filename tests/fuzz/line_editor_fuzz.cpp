// The REPL's key decoder and line buffer take raw terminal input (keys, pastes, escape
// sequences) in arbitrary chunks. Whatever arrives: the decoder loses and invents no byte and
// splits the same way however the input is chunked; the line stays valid UTF-8 with the cursor
// on a character boundary; and the rendered line sends the terminal no control character of
// the text's own (only render's framing: CR, erase line, cursor forward) and no character
// the screen would hide (needs_visible_escape), which it shows escaped as the offer does.

#include <string>
#include <string_view>
#include <vector>

#include "agent/line_editor.h"
#include "pty/utf8.h"
#include "tests/fuzz/fuzz_common.h"

using namespace caretz;
using caretz::fuzz::require;

namespace {

std::vector<std::string> decode(const std::vector<std::string_view>& pieces) {
    KeyDecoder decoder;
    std::vector<std::string> keys;
    for (auto piece : pieces)
        for (auto& k : decoder.feed(piece)) keys.push_back(std::move(k));
    for (auto& k : decoder.flush()) keys.push_back(std::move(k));
    require(!decoder.has_pending(), "bytes left pending after flush()");
    return keys;
}

void check_render(const LineBuffer& buffer, int columns) {
    std::string out = render("caretz> ", buffer, columns);
    require(out.starts_with("\r"), "render() does not start at column 0");
    auto erase = out.rfind("\x1b[K\r");
    require(erase != std::string::npos, "render() does not erase the rest of the line");
    std::string_view shown(out.data() + 1, erase - 1);
    bool clean = true;
    bool valid = fuzz::utf8_valid(shown, [&](char32_t cp) {
        clean = clean && !fuzz::is_control(cp) && !needs_visible_escape(cp);
    });
    require(valid, "the rendered line is not valid UTF-8");
    require(clean, "the rendered line sends a control or hidden character");
    std::string_view tail(out.data() + erase + 4, out.size() - erase - 4);
    if (!tail.empty()) {
        require(tail.starts_with("\x1b[") && tail.ends_with("C"),
                "unexpected bytes after the line");
        for (char c : tail.substr(2, tail.size() - 3))
            require(c >= '0' && c <= '9', "bad cursor move");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    auto keys = decode(fuzz::chunks(input));
    std::string joined;
    for (const auto& k : keys) {
        require(!k.empty(), "an empty key");
        joined += k;
    }
    require(joined == input, "the decoder lost or invented bytes");
    require(keys == decode({input}), "chunked input splits into other keys than whole input");

    History history(8);
    history.add("ls -la");
    history.add("echo h\xc3\xa9llo");
    LineBuffer buffer(history);
    int columns = size > 0 ? 2 + data[0] % 100 : 80;
    for (const auto& key : keys) {
        Action action = buffer.feed(key);
        const std::string& text = buffer.text();
        require(fuzz::utf8_valid(text, [](char32_t) {}), "the line is not valid UTF-8");
        require(buffer.cursor() <= text.size(), "the cursor is past the end");
        require(buffer.cursor() == text.size() ||
                    (static_cast<unsigned char>(text[buffer.cursor()]) & 0xC0) != 0x80,
                "the cursor is inside a character");
        check_render(buffer, columns);
        if (action == Action::submit) {
            history.add(text);
            buffer = LineBuffer(history);
        }
    }
    return 0;
}
