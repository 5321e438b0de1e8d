#pragma once

#include <poll.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "pty/pty.h"
#include "pty/tail_buffer.h"
#include "sandbox/sandbox.h"

namespace caretz {

class QuestionGate;

// The command's side of a pump: a fresh sandbox's pipes and PTY, or the session supervisor's
// control socket. The pump decides when keys, interrupts and window sizes go to it.
class PumpTarget {
public:
    virtual ~PumpTarget() = default;
    // Appends the descriptors that carry the command's traffic (-1 for one that is closed).
    virtual void watch(std::vector<pollfd>& fds) const = 0;
    // The i-th watched descriptor is ready; false when the sandbox is gone.
    virtual bool on_ready(size_t index) = 0;
    // Whether the command runs now, so that keys may reach it.
    virtual bool command_running() const = 0;
    virtual void send_keys(std::string_view keys) = 0;
    // Ctrl-C or Ctrl-\ (`key`), for the signal it stands for.
    virtual void send_interrupt(char key) = 0;
    virtual void resize(WindowSize size) = 0;
};

// The one loop that moves a command's traffic: the target's descriptors, the user's keys and
// window size (CommandIo::terminal), and the network question gate, which parks the pump while
// a question is on screen so that neither keys nor output move under it.
//
// Keys reach the command only while it runs. A command the user types into (stdin from the
// terminal) gets every key; after an interrupt key the rest waits a moment in the terminal, so
// that keys typed once the command ends belong to Caretz's prompt, in order. A command nobody
// types into (the model's) gets only Ctrl-C and Ctrl-\, pressed again each second until it ends,
// and what is typed after them stays for the prompt; other keys wait for the prompt too
// (Terminal::hold_for_prompt), unless an interrupt stops the turn they were typed during.
class CommandPump {
public:
    // How long keys typed after an interrupt wait for the command to end before they go to it
    // after all (a program that catches Ctrl-C, such as a REPL, reads on).
    static constexpr std::chrono::milliseconds kKeysHeldAfterInterrupt{500};

    // `output_from_pty`: the command's output comes from a terminal of its own, which has
    // made its '\n' "\r\n" already (see Terminal::pass_output_through).
    CommandPump(PumpTarget& target, const CommandIo& io, QuestionGate* gate, bool output_from_pty);
    ~CommandPump();
    CommandPump(const CommandPump&) = delete;
    CommandPump& operator=(const CommandPump&) = delete;

    // Waits for the next event and handles it; false when the sandbox is gone. One pump
    // serves one command: an interrupt it repeats, and keys it holds back, end with it.
    bool step();

    // The keys this pump sent to the command, as typed (the last kKeysKept bytes of them).
    std::string_view keys_sent() const { return keys_sent_.view(); }
    static constexpr size_t kKeysKept = 65536;

private:
    void take_keys();
    void interrupt(char key);

    PumpTarget& target_;
    std::vector<pollfd> fds_;  // kept between steps, so waiting allocates nothing
    const CommandIo& io_;
    QuestionGate* gate_;
    bool passing_through_ = false;
    InterruptRepeat repeat_;
    char repeat_key_ = 0;
    // Keys stay in the terminal until then (time_point::max(): for the rest of this pump).
    std::chrono::steady_clock::time_point keys_held_until_{};
    TailBuffer keys_sent_{kKeysKept};
};

// The last `count` whole lines of `keys` (typed keys, each ending where ends_line() says),
// their line ends included; what follows the last line end
// is no whole line and is left out. All of the whole lines when there are fewer.
std::string_view last_lines(std::string_view keys, int count);

// A command ended with `unread` whole lines typed into it left unread, as the sandbox counted:
// they are for Caretz's prompt, as a shell would run them next. Their text comes from the keys
// Caretz itself sent (`keys_sent`), so nothing in the sandbox can type at the prompt; a wrong
// count can only repeat what the user typed.
void give_back_unread_lines(const CommandIo& io, std::string_view keys_sent, int unread);

}  // namespace caretz
