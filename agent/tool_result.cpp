#include "agent/tool_result.h"

#include "pty/output_capture.h"

namespace caretz {

namespace {

// A job writes to a file, not a terminal, so nothing turned its newlines into CR LF.
std::string rendered_file_output(std::string_view bytes, int columns) {
    std::string crlf;
    for (char c : bytes) {
        if (c == '\n' && (crlf.empty() || crlf.back() != '\r')) crlf += '\r';
        crlf += c;
    }
    OutputCapture capture(columns, crlf.size() + 1, crlf.size() + 1);
    capture.append(crlf);
    return capture.text();
}

// Where a cut at `at` goes to keep whole lines: after the newline before it, when there is
// one in the last quarter of the way.
size_t line_start_before(std::string_view text, size_t at) {
    size_t newline = text.rfind('\n', at == 0 ? 0 : at - 1);
    return newline != std::string_view::npos && newline + 1 >= at - at / 4 ? newline + 1 : at;
}

void append_output(std::string& text, const std::string& output) {
    if (output.find_first_not_of(" \t\r\n") == std::string::npos) {
        text += "(no output)\n";
        return;
    }
    text += output;
    if (output.back() != '\n') text += '\n';
}

}  // namespace

std::string bounded_output(const std::string& output, size_t limit) {
    if (output.size() <= limit) return output;
    const std::string_view text(output);
    const size_t head = line_start_before(text, limit / 3);
    size_t tail = text.size() - (limit - limit / 3);
    size_t newline = text.find('\n', tail);
    if (newline != std::string_view::npos && newline < tail + limit / 8) tail = newline + 1;
    std::string out(text.substr(0, head));
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += "[... " + std::to_string(tail - head) +
           " bytes of output left out: a result holds at most " + std::to_string(limit) +
           " bytes ...]\n";
    out += text.substr(tail);
    return out;
}

std::string command_result_text(const CommandOutcome& outcome, bool interrupted, size_t limit) {
    std::string text;
    if (outcome.ran_on_host) {
        text += kRanOutsideNote;
        text += '\n';
    }
    text += "exit status: " + std::to_string(outcome.exit_code);
    if (interrupted) text += " (the user stopped the command with Ctrl-C)";
    if (outcome.shell_exited)
        text += " (the command ended the session shell; the next command starts a fresh one)";
    text += "\n";
    append_output(text, bounded_output(outcome.output, limit));
    return text;
}

std::string job_state_text(const JobReport& report) {
    switch (report.state) {
        case JobReport::State::running:
            return "running";
        case JobReport::State::exited:
            return "exited with status " + std::to_string(report.status);
        case JobReport::State::killed:
            return "ended by signal " + std::to_string(report.status);
    }
    return "unknown";
}

std::string job_report_text(int id, const JobReport& report, int columns, size_t limit) {
    std::string text = "job " + std::to_string(id) + ": " + job_state_text(report) + "; " +
                       std::to_string(report.output_bytes) + " bytes of output\n";
    std::string output = rendered_file_output(report.output_head, columns);
    if (!report.output_tail.empty()) {
        std::string tail = report.output_tail;
        uint64_t omitted = report.output_bytes - report.output_head.size() - tail.size();
        // Start the tail at a line boundary so a cut character or escape sequence is not shown.
        auto newline = tail.find('\n');
        if (newline != std::string::npos) {
            omitted += newline + 1;
            tail.erase(0, newline + 1);
        }
        if (!output.empty() && output.back() != '\n') output += '\n';
        output += "[... " + std::to_string(omitted) + " bytes of output omitted ...]\n";
        output += rendered_file_output(tail, columns);
    }
    append_output(text, bounded_output(output, limit));
    return text;
}

}  // namespace caretz
