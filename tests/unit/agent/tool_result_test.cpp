#include "agent/tool_result.h"

#include <catch2/catch.hpp>
#include <string>

using namespace caretz;

namespace {

CommandOutcome sandboxed_refusal() {
    CommandOutcome o;
    o.exit_code = 1;
    o.output = "touch: cannot touch '/home/u/outside/f': Read-only file system\n";
    o.cwd = "/home/u/ws";
    o.refusals = {{RefusalKind::write, "/home/u/outside/f", "touch: cannot touch ..."}};
    return o;
}

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

}  // namespace

TEST_CASE("tool result: a sandboxed command gets its exit status, then its output",
          "[tool_result]") {
    CommandOutcome o;
    o.exit_code = 0;
    o.output = "hello\n";
    CHECK(command_result_text(o, false) == "exit status: 0\nhello\n");
    o.output = "";
    CHECK(command_result_text(o, false) == "exit status: 0\n(no output)\n");
    o.output = "no newline";
    CHECK(command_result_text(o, false) == "exit status: 0\nno newline\n");
}

TEST_CASE("tool result: an approved rerun says so on its first line", "[tool_result]") {
    CommandOutcome o;
    o.exit_code = 0;
    o.output = "done\n";
    o.ran_on_host = true;
    o.decision = Decision::allow_once;
    std::string text = command_result_text(o, false);
    CHECK(first_line(text) == std::string(kRanOutsideNote));
    CHECK(first_line(text).find("OUTSIDE the sandbox") != std::string::npos);
    CHECK(text.substr(text.find('\n') + 1) == "exit status: 0\ndone\n");

    o.decision = Decision::session_allowance;
    CHECK(first_line(command_result_text(o, false)) == std::string(kRanOutsideNote));
}

TEST_CASE("tool result: after a Deny it is exactly the sandboxed result", "[tool_result]") {
    CommandOutcome nobody_asked = sandboxed_refusal();
    for (Decision d : {Decision::deny, Decision::timeout, Decision::nobody_to_ask}) {
        CommandOutcome denied = sandboxed_refusal();
        denied.decision = d;
        std::string text = command_result_text(denied, false);
        CHECK(text == command_result_text(nobody_asked, false));
        CHECK(text == "exit status: 1\n" + denied.output);
        for (const char* word :
             {"OUTSIDE", "outside the sandbox", "approve", "offer", "deny", "Deny"})
            CHECK(text.find(word) == std::string::npos);
    }
}

TEST_CASE("tool result: Ctrl-C and an ended shell are in the header", "[tool_result]") {
    CommandOutcome o;
    o.exit_code = 130;
    CHECK(first_line(command_result_text(o, true)) ==
          "exit status: 130 (the user stopped the command with Ctrl-C)");
    o.exit_code = 0;
    o.shell_exited = true;
    CHECK(first_line(command_result_text(o, false)).find("ended the session shell") !=
          std::string::npos);
}

TEST_CASE("tool result: a job's report has its state, then head and tail", "[tool_result]") {
    JobReport running;
    running.output_head = "serving on :8000\n";
    running.output_bytes = running.output_head.size();
    CHECK(job_report_text(3, running, 80) ==
          "job 3: running; 17 bytes of output\nserving on :8000\n");

    JobReport lines;  // written to a file: bare newlines, no carriage returns
    lines.output_head = "one\ntwo\nthree\n";
    lines.output_bytes = lines.output_head.size();
    CHECK(job_report_text(1, lines, 80) == "job 1: running; 14 bytes of output\none\ntwo\nthree\n");

    JobReport done;
    done.state = JobReport::State::exited;
    done.status = 2;
    CHECK(job_report_text(4, done, 80) ==
          "job 4: exited with status 2; 0 bytes of output\n(no output)\n");

    JobReport killed;
    killed.state = JobReport::State::killed;
    killed.status = 15;
    killed.output_head = "start\n";
    killed.output_tail = "cut line\nlast\n";
    killed.output_bytes = 1000;
    std::string text = job_report_text(5, killed, 80);
    CHECK(text.find("job 5: ended by signal 15; 1000 bytes of output\nstart\n") == 0);
    CHECK(text.find("[... 989 bytes of output omitted ...]\nlast\n") != std::string::npos);
}

TEST_CASE("tool result: one command's output is bounded, keeping its start and its end",
          "[tool_result]") {
    std::string output;
    for (int i = 0; i < 5000; ++i) output += "line " + std::to_string(i) + " of a long log\n";
    CommandOutcome o;
    o.exit_code = 1;
    o.output = output;
    const std::string text = command_result_text(o, false, 4096);
    CHECK(text.size() < 4096 + 200);
    CHECK(text.starts_with("exit status: 1\nline 0 of a long log\n"));
    CHECK(text.ends_with("line 4999 of a long log\n"));
    CHECK(text.find("bytes of output left out: a result holds at most 4096 bytes ...]\n") !=
          std::string::npos);
    // Cut at line boundaries: every line is whole.
    for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
        const std::string line = text.substr(at, end - at);
        INFO(line);
        CHECK((line.starts_with("line ") ? line.ends_with(" of a long log") : true));
    }
    // The default bound is the README's 16 KiB.
    CHECK(command_result_text(o, false).size() < kResultOutputLimit + 200);
    o.output = "short\n";
    CHECK(command_result_text(o, false, 4096) == "exit status: 1\nshort\n");
}
