#pragma once

#include <map>
#include <string>
#include <string_view>

namespace caretz {

// Text from the model made safe to show on a terminal: control characters other than
// newline and tab, DEL, C1 controls and bytes that are not UTF-8 show as visible escapes, so
// the model cannot send the terminal a control sequence. A UTF-8 character cut between chunks
// waits for its rest.
class TerminalTextFilter {
public:
    std::string feed(std::string_view text);

private:
    std::string pending_;
};

// A front end without a terminal (an ACP client) that follows a turn as events rather than
// as text on a descriptor. Called on the thread that runs the turn.
class TurnListener {
public:
    virtual ~TurnListener() = default;
    // The model's text as it streams (the main agent's only).
    virtual void answer(std::string_view text) = 0;
    // A shell command the model asked for starts; `background` for a background job.
    virtual void command_started(const std::string& command, bool background) = 0;
    // What it prints while it runs in the sandbox, as raw terminal bytes.
    virtual void command_output(std::string_view bytes) = 0;
    // It ended: whether it succeeded, and the result as the model reads it.
    virtual void command_finished(bool succeeded, const std::string& result) = 0;
};

// Where the parts of a turn go. -1 drops that part.
struct ViewTargets {
    int answer_fd = -1;    // the model's text, streamed
    int activity_fd = -1;  // Caretz's lines: what runs, retries, errors
    int output_fd = -1;    // what commands print while they run
    std::string prefix;    // put before activity lines (a subagent's are marked)
    TurnListener* listener = nullptr;
    bool answers = true;  // false for a subagent, whose text is its result, not the answer
};

// Shows a turn as it happens.
class TurnView {
public:
    explicit TurnView(ViewTargets targets);

    void answer(std::string_view text);
    // Ends the streamed answer's last line, if it is open.
    void end_answer();
    // A line saying what runs (a command, a job request).
    void activity(const std::string& line);
    // A shell command of the model's starts, and ends with its exit status and the result the
    // model reads; `failed` is for a command that could not run at all.
    void command_started(const std::string& command, bool background);
    void command_finished(int exit_code, const std::string& result);
    void command_failed(const std::string& error);
    void command_output(std::string_view bytes);
    // Where command_output writes the bytes, unchanged (-1: nowhere).
    int output_fd() const { return targets_.output_fd; }
    // A line from Caretz itself: "caretz: " + line.
    void notice(const std::string& line);

    // The view for a subagent started from this one: no answer text, marked activity.
    TurnView for_subagent(int number) const;

private:
    void write(int fd, std::string_view bytes);
    void start_line(int fd);

    ViewTargets targets_;
    bool styled_;
    TerminalTextFilter filter_;
    std::map<int, bool> mid_line_;  // per descriptor: the last byte written was not '\n'
};

}  // namespace caretz
