#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "pty/pty.h"
#include "pty/terminal_modes.h"
#include "pty/unique_fd.h"

namespace caretz {

// The user's terminal, and the only code that touches it (as tmux's tty.c is): its modes, the
// one reader of its keys, typeahead, the screen state before a question, window-size changes,
// and the foreground hand-off to a command that runs outside the sandbox. Whoever holds the
// terminal at a moment (the line editor, a running command, the offer, the network approval,
// the interrupt of a model's turn) takes keys from here, and gives back what belongs to the
// next holder, so no key is read twice or lost between two of them.
//
// Caretz has at most one Terminal, made only when both its input and output are terminals.
// Without one, nothing reads keys and nothing can wait for a key nobody can press.
class Terminal {
public:
    // The process's own standard input and output when both are terminals, else nullptr.
    // The returned terminal is in raw mode, restores its modes on every exit path (signals
    // included) and follows window-size changes (SIGWINCH, installed here and nowhere else).
    static std::unique_ptr<Terminal> open_standard();
    // Whether open_standard() would give a terminal: standard input and output both are.
    static bool standard_is_terminal();

    // Keys from `in_fd`, Caretz's text to `out_fd`. When `in_fd` is a terminal its modes are
    // saved and owned; otherwise (a pipe, in tests) only the key handling applies.
    Terminal(int in_fd, int out_fd);
    ~Terminal();
    Terminal(const Terminal&) = delete;
    Terminal& operator=(const Terminal&) = delete;

    // Raw input for Caretz's own reading; restore() gives back the modes it found.
    void enter_raw();
    void restore() noexcept;

    // Keys. input_fd() is for poll() sets (-1 once the input closed); a caller that sees
    // keys_waiting() must not wait for the descriptor, as given-back keys are already here.
    int input_fd() const { return input_closed_ ? -1 : in_fd_; }
    bool keys_waiting() const { return !pending_.empty(); }
    bool input_closed() const { return input_closed_ && pending_.empty(); }
    // What was typed so far, without waiting: given-back keys first, then one read. An end
    // of input (the terminal hung up) closes the input and, for a real terminal that is gone,
    // raises SIGHUP as the kernel would for a controlling terminal.
    std::string take_keys();
    // Waits up to `timeout_ms` (-1: no limit) for keys; false on timeout, on a window-size
    // change (kept for take_resize) and once the input is closed.
    bool wait_for_keys(int timeout_ms);
    // Puts keys back in front of what comes next, for the next holder of the terminal.
    void give_back(std::string_view keys);
    // Keys typed while nothing took them as keys (a model's turn, a command nobody types into)
    // wait here for Caretz's next prompt, apart from what take_keys() returns, until
    // release_held() puts them in front of what comes next.
    void hold_for_prompt(std::string_view keys) { held_.append(keys); }
    void release_held();
    // Forgets the held keys (a Ctrl-C stopped what they were typed during).
    void drop_held() { held_.clear(); }
    // Drops everything typed so far (held, given back or still in the terminal), so that
    // nothing typed before a question can answer it.
    void drop_typeahead();

    // Caretz's own text, each line ending in "\n" or "\r\n": on the terminal every line ends
    // in exactly one "\r\n", whether output passes through or not.
    void write(std::string_view text) const;
    // Turns the terminal's output processing off (true) or back on (false), where its input
    // and output are the same terminal: a command's output copied here has had its '\n' made
    // "\r\n" by the command's own terminal already, so it then arrives byte for byte as that
    // terminal wrote it, without a second '\r', and as fast as `script` copies it.
    void pass_output_through(bool on);
    int output_fd() const { return out_fd_; }
    // Undoes what a command's output may have left set (colours, alternate screen, scroll
    // region, hidden cursor, mouse and paste modes) and clears the screen, so nothing printed
    // before can stand beside a question and pass for part of it.
    void reset_for_question() const;
    // Bytes that undo what Caretz changes on the terminal for a while (the title it pushes
    // while a question waits): should Caretz die from a signal (SIGTERM, SIGHUP) or exit before
    // it undoes the change itself, they are written as the modes come back. Empty forgets
    // them. See TerminalModes::set_exit_undo.
    void undo_on_exit(std::string_view bytes) noexcept;

    // Window size. resize_fd() turns readable when the window changed; take_resize() then
    // returns the new size once (and nullopt when nothing changed since the last call).
    int resize_fd() const { return resize_fd_; }
    std::optional<WindowSize> take_resize();
    // nullopt when the output is no terminal.
    std::optional<WindowSize> size() const;

    // Runs in a freshly forked child, before exec, async-signal-safe: makes the child's
    // process group the terminal's foreground, so its keys and signals (Ctrl-C, a password
    // prompt) are the child's alone.
    void give_foreground_in_child() const noexcept;
    // Hands the foreground to `pgrp` with the terminal's own modes, and takes it back in raw
    // mode once it is done.
    void hand_foreground_to(pid_t pgrp);
    void take_foreground_back();

private:
    int in_fd_;
    int out_fd_;
    std::optional<TerminalModes> modes_;
    bool one_terminal_ = false;  // input and output are the same terminal
    std::string pending_;
    std::string held_;  // see hold_for_prompt()
    bool input_closed_ = false;
    int resize_fd_ = -1;    // -1 unless this terminal follows SIGWINCH
    bool resized_ = false;  // a change seen while waiting for keys, not yet taken
};

}  // namespace caretz
