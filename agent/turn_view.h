#pragma once

#include <map>
#include <string>
#include <string_view>

namespace caretz {

// Text from the model made safe to show on a terminal: control characters other than
// newline and tab, DEL and C1 controls show as visible escapes, so the model cannot send the
// terminal a control sequence. A UTF-8 character cut between chunks waits for its rest.
class TerminalTextFilter {
public:
    std::string feed(std::string_view text);

private:
    std::string pending_;
};

// Where the parts of a turn go. -1 drops that part.
struct ViewTargets {
    int answer_fd = -1;    // the model's text, streamed
    int activity_fd = -1;  // Caretz's lines: what runs, retries, errors
    int output_fd = -1;    // what commands print while they run
    std::string prefix;    // put before activity lines (a subagent's are marked)
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
    void command_output(std::string_view bytes);
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
