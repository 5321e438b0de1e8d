#include "agent/turn_view.h"

#include <unistd.h>

#include <cstdio>

#include "escalation/offer.h"
#include "pty/fd_io.h"
#include "pty/utf8.h"

namespace caretz {

namespace {

constexpr const char* kDim = "\x1b[2m";
constexpr const char* kPlain = "\x1b[0m";

}  // namespace

std::string TerminalTextFilter::feed(std::string_view text) {
    std::string input = pending_ + std::string(text);
    pending_ = input.substr(input.size() - utf8_incomplete_tail(input));
    input.resize(input.size() - pending_.size());
    std::string out;
    char buf[8];
    for (size_t i = 0; i < input.size();) {
        auto c = static_cast<unsigned char>(input[i]);
        if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            std::snprintf(buf, sizeof buf, "^%c", c == 0x7f ? '?' : c + '@');
            out += buf;
            ++i;
            continue;
        }
        // C1 controls (U+0080..U+009F) act as escape sequences on some terminals, and so does a
        // lone byte such as 0x9B (CSI) on a terminal that takes 8-bit controls.
        const Utf8Char character = decode_utf8(input, i);
        const std::string_view bytes = std::string_view(input).substr(i, character.length);
        if (!character.valid || character.code_point < 0xA0) {
            out += shown_escaped(bytes);
        } else {
            out += bytes;
        }
        i += character.length;
    }
    return out;
}

TurnView::TurnView(ViewTargets targets)
    : targets_(std::move(targets)),
      styled_(targets_.activity_fd >= 0 && ::isatty(targets_.activity_fd)) {}

void TurnView::write(int fd, std::string_view bytes) {
    if (fd < 0 || bytes.empty()) return;
    write_all(fd, bytes);
    mid_line_[fd] = bytes.back() != '\n';
}

void TurnView::start_line(int fd) {
    if (fd >= 0 && mid_line_[fd]) write(fd, "\n");
}

void TurnView::answer(std::string_view text) {
    if (!targets_.answers) return;
    write(targets_.answer_fd, filter_.feed(text));
    if (targets_.listener) targets_.listener->answer(text);
}

void TurnView::end_answer() {
    start_line(targets_.answer_fd);
}

void TurnView::activity(const std::string& line) {
    start_line(targets_.activity_fd);
    std::string text = targets_.prefix + line;
    write(targets_.activity_fd, styled_ ? kDim + text + kPlain + "\n" : text + "\n");
}

void TurnView::command_started(const std::string& command, bool background) {
    activity("$ " + shown_escaped(command) + (background ? "   (background job)" : ""));
    if (targets_.listener) targets_.listener->command_started(command, background);
}

void TurnView::command_finished(int exit_code, const std::string& result) {
    if (exit_code != 0) activity("[exit " + std::to_string(exit_code) + "]");
    if (targets_.listener) targets_.listener->command_finished(exit_code == 0, result);
}

void TurnView::command_failed(const std::string& error) {
    notice(error);
    if (targets_.listener) targets_.listener->command_finished(false, error);
}

void TurnView::command_output(std::string_view bytes) {
    write(targets_.output_fd, bytes);
    if (targets_.listener) targets_.listener->command_output(bytes);
}

void TurnView::notice(const std::string& line) {
    start_line(targets_.activity_fd);
    write(targets_.activity_fd, "caretz: " + targets_.prefix + line + "\n");
}

TurnView TurnView::for_subagent(int number) const {
    ViewTargets sub = targets_;
    sub.answer_fd = -1;
    sub.answers = false;
    sub.prefix = targets_.prefix + "[subagent " + std::to_string(number) + "] ";
    return TurnView(sub);
}

}  // namespace caretz
