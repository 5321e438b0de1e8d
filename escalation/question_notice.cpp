#include "escalation/question_notice.h"

#include <fcntl.h>

#include <chrono>
#include <thread>

#include "escalation/offer.h"
#include "pty/utf8.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

constexpr std::string_view kTitle = "Caretz waits for an answer";
constexpr size_t kSummaryBytes = 200;

// tmux passes a sequence on to the outer terminal when it comes wrapped in its DCS form,
// with every ESC inside doubled.
std::string tmux_passthrough(std::string_view sequence) {
    std::string out = "\x1bPtmux;";
    for (char c : sequence) {
        if (c == '\x1b') out += '\x1b';
        out += c;
    }
    return out + "\x1b\\";
}

}  // namespace

std::string notice_start(NotifyMode mode, std::string_view summary, NoticeRoute route) {
    if (mode == NotifyMode::off) return "";
    // The title goes on the terminal's title stack first (xterm's CSI 22;0t, which tmux keeps
    // per pane too), so notice_end can give back whatever title the user had.
    std::string out = "\x1b[22;0t\x1b]0;" + std::string(kTitle) + "\x07";
    // The bell reaches tmux itself, which flags the window and passes it on as bell-action says.
    out += '\x07';
    if (mode != NotifyMode::desktop) return out;
    const std::string osc9 = "\x1b]9;Caretz: " + std::string(summary) + "\x07";
    const std::string osc777 =
        "\x1b]777;notify;" + std::string(kTitle) + ";" + std::string(summary) + "\x07";
    if (route == NoticeRoute::tmux_passthrough)
        return out + tmux_passthrough(osc9) + tmux_passthrough(osc777);
    return out + osc9 + osc777;
}

std::string notice_end(NotifyMode mode) {
    return mode == NotifyMode::off ? "" : "\x1b[23;0t";
}

std::string question_summary(std::string_view text) {
    const std::string escaped = shown_escaped(text);
    if (escaped.size() <= kSummaryBytes) return escaped;
    size_t end = 0;
    while (end < escaped.size()) {
        const size_t next = end + decode_utf8(escaped, end).length;
        if (next > kSummaryBytes) break;
        end = next;
    }
    return escaped.substr(0, end) + "...";
}

NoticeRoute notice_route(const Environment& env) {
    auto tmux = env.find("TMUX");
    if (tmux == env.end() || tmux->second.empty()) return NoticeRoute::direct;
    std::vector<std::string> argv = {"tmux", "display-message", "-p"};
    if (auto pane = env.find("TMUX_PANE"); pane != env.end() && !pane->second.empty()) {
        argv.push_back("-t");
        argv.push_back(pane->second);
    }
    argv.push_back("#{allow-passthrough}");
    SpawnOptions options;
    options.new_session = true;
    options.search_path = true;
    auto answer = output_of(argv, options, StderrTo::null, std::chrono::seconds(1));
    if (!answer) return NoticeRoute::tmux;
    while (!answer->empty() && (answer->back() == '\n' || answer->back() == ' '))
        answer->pop_back();
    const bool allowed = !answer->empty() && *answer != "0" && *answer != "off";
    return allowed ? NoticeRoute::tmux_passthrough : NoticeRoute::tmux;
}

void start_notify_command(const std::vector<std::string>& command, const std::string& summary) {
    if (command.empty()) return;
    std::vector<std::string> argv = command;
    argv.push_back(summary);
    Environment env = command_environment(current_environment(), {}, api_key_variables(""));
    env["CARETZ_QUESTION"] = summary;
    UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    SpawnOptions options;
    options.stdin_fd = null.get();
    options.stdout_fd = null.get();
    options.stderr_fd = null.get();
    options.env = std::move(env);
    options.new_session = true;
    options.search_path = true;
    // The network approval asks from a short-lived thread, whose end would kill a child that
    // dies with its parent thread; the command may outlive the question instead.
    options.die_with_parent = false;
    pid_t pid = spawn_process(argv, options);
    if (pid > 0) std::thread([pid] { wait_for_exit(pid); }).detach();
}

QuestionNotice::QuestionNotice(Terminal& terminal, const NoticeSettings& settings,
                               const std::string& summary)
    : terminal_(terminal), mode_(settings.mode) {
    const NoticeRoute route =
        mode_ == NotifyMode::desktop ? notice_route(current_environment()) : NoticeRoute::direct;
    // Set before the title is pushed, so that no kill comes after the push and before the
    // means to pop it: the title would stay "Caretz waits for an answer" for good.
    terminal_.undo_on_exit(notice_end(mode_));
    terminal_.write(notice_start(mode_, summary, route));
    start_notify_command(settings.command, summary);
}

QuestionNotice::~QuestionNotice() {
    terminal_.write(notice_end(mode_));
    terminal_.undo_on_exit("");
}

}  // namespace caretz
