#include "sandbox/command_pump.h"

#include <algorithm>
#include <cerrno>

#include "sandbox/network/network_gate.h"

namespace caretz {

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds from now until `when`, for poll(): -1 for never, 0 for the past.
int ms_until(Clock::time_point when) {
    if (when == Clock::time_point::max()) return -1;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now());
    return static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, left.count()));
}

// The shorter of two poll() timeouts, -1 being no limit.
int sooner(int a, int b) {
    if (a < 0) return b;
    if (b < 0) return a;
    return std::min(a, b);
}

}  // namespace

CommandPump::CommandPump(PumpTarget& target, const CommandIo& io, QuestionGate* gate,
                         bool output_from_pty)
    : target_(target), io_(io), gate_(gate) {
    passing_through_ = io.terminal && io.output_to_terminal && output_from_pty;
    if (passing_through_) io.terminal->pass_output_through(true);
}

CommandPump::~CommandPump() {
    if (passing_through_) io_.terminal->pass_output_through(false);
}

bool CommandPump::step() {
    Terminal* terminal = io_.terminal;
    const bool held = Clock::now() < keys_held_until_;
    const bool keys = terminal && target_.command_running() && !held;
    if (keys && terminal->keys_waiting()) {
        take_keys();
        return true;
    }
    std::vector<pollfd>& fds = fds_;
    fds.clear();
    target_.watch(fds);
    const size_t extra = fds.size();
    fds.push_back({keys ? terminal->input_fd() : -1, POLLIN, 0});
    fds.push_back({terminal ? terminal->resize_fd() : -1, POLLIN, 0});
    fds.push_back({gate_ ? gate_->fd() : -1, POLLIN, 0});

    int timeout = repeat_.ms_until_due();
    if (held && target_.command_running()) timeout = sooner(timeout, ms_until(keys_held_until_));
    int ready = ::poll(fds.data(), fds.size(), timeout);
    if (ready < 0) return errno == EINTR;
    if (repeat_.take_due()) target_.send_interrupt(repeat_key_);
    if (ready == 0) return true;
    // A network question is on screen: neither read the keys nor move output until it is
    // answered.
    if (fds[extra + 2].revents & POLLIN) {
        gate_->hold();
        return true;
    }
    if (fds[extra + 1].revents & POLLIN) {
        if (auto size = terminal->take_resize()) target_.resize(*size);
    }
    if (fds[extra].revents & (POLLIN | POLLHUP | POLLERR)) take_keys();
    for (size_t i = 0; i < extra; ++i) {
        if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
            !target_.on_ready(i))
            return false;
    }
    return true;
}

void CommandPump::take_keys() {
    std::string typed = io_.terminal->take_keys();
    auto at = std::find_if(typed.begin(), typed.end(), [](char c) { return signal_for_key(c); });
    const size_t cut = at == typed.end() ? typed.size() : static_cast<size_t>(at - typed.begin());
    const std::string_view keys = std::string_view(typed).substr(0, cut);
    if (!io_.stdin_from_terminal) {
        // Nobody types into this command: the keys were typed for Caretz's next prompt.
        io_.terminal->hold_for_prompt(keys);
    } else if (!keys.empty()) {
        target_.send_keys(keys);
        keys_sent_.append(keys);
    }
    if (at == typed.end()) return;
    // What follows the interrupt was typed while the command was being stopped: it waits in
    // the terminal, for the prompt once the command has ended. What a stopped model's command
    // held goes with the turn it stops, as TurnInterrupt drops it.
    if (!io_.stdin_from_terminal) io_.terminal->drop_held();
    io_.terminal->give_back(std::string_view(typed).substr(cut + 1));
    interrupt(*at);
}

void CommandPump::interrupt(char key) {
    target_.send_interrupt(key);
    if (io_.stdin_from_terminal) {
        keys_held_until_ = Clock::now() + kKeysHeldAfterInterrupt;
        return;
    }
    // A command the user does not type into (the model's) is stopped, not told: the interrupt
    // is pressed again until it ends, and whoever started it (a model's turn) stops too.
    keys_held_until_ = Clock::time_point::max();
    repeat_key_ = key;
    repeat_.start();
    if (io_.on_interrupt_key) io_.on_interrupt_key();
}

std::string_view last_lines(std::string_view keys, int count) {
    if (count <= 0) return {};
    // Back from the end: the lines end at the last line end and start after the line end
    // before the count-th.
    size_t end = std::string_view::npos;
    int ends = 0;
    for (size_t i = keys.size(); i-- > 0;) {
        if (!ends_line(keys[i])) continue;
        if (end == std::string_view::npos) end = i;
        if (++ends > count) return keys.substr(i + 1, end - i);
    }
    return end == std::string_view::npos ? std::string_view() : keys.substr(0, end + 1);
}

void give_back_unread_lines(const CommandIo& io, std::string_view keys_sent, int unread) {
    if (io.terminal && unread > 0) io.terminal->give_back(last_lines(keys_sent, unread));
}

}  // namespace caretz
