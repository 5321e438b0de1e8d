#include "app/resume.h"

#include <cstdio>
#include <ctime>
#include <optional>
#include <stdexcept>

#include "agent/line_editor.h"
#include "escalation/offer.h"
#include "pty/terminal.h"

namespace caretz {

namespace {

// --resume lists this many: the recent ones are what an interrupted incident needs.
constexpr size_t kListed = 20;
constexpr size_t kPromptShown = 60;

std::string size_text(std::uintmax_t bytes) {
    if (bytes < 1024) return std::to_string(bytes) + " B";
    if (bytes < 1024 * 1024) return std::to_string(bytes / 1024) + " KiB";
    return std::to_string(bytes / (1024 * 1024)) + " MiB";
}

std::string local_time(std::int64_t ns) {
    std::time_t seconds = static_cast<std::time_t>(ns / 1000000000);
    std::tm tm{};
    localtime_r(&seconds, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
    return text;
}

// One line of the list: when it was last written, its size, its id and its first prompt (on
// one line, escaped: a prompt may hold anything, control characters included).
std::string listed(const SavedConversation& saved) {
    std::string prompt = saved.first_prompt.empty() ? "(no prompt)" : saved.first_prompt;
    std::string shown;
    for (char c : prompt) shown += c == '\n' || c == '\t' ? ' ' : c;
    shown = shown_escaped(shown);
    if (shown.size() > kPromptShown) {
        size_t cut = kPromptShown;
        while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;
        shown = shown.substr(0, cut) + "…";
    }
    char size[16];
    std::snprintf(size, sizeof size, "%8s", size_text(saved.bytes).c_str());
    return local_time(saved.last_write_ns) + size + "  " + saved.session_id + "  " + shown;
}

std::string numbered_list(const std::vector<SavedConversation>& list) {
    std::string out;
    for (size_t i = 0; i < list.size() && i < kListed; ++i) {
        char number[8];
        std::snprintf(number, sizeof number, "%3zu  ", i + 1);
        out += number + listed(list[i]) + "\n";
    }
    return out;
}

// The user's choice from the list, on the terminal; nullopt when they chose none (an empty
// line, Ctrl-C or Ctrl-D).
std::optional<size_t> choose(const std::vector<SavedConversation>& list) {
    std::unique_ptr<Terminal> terminal = Terminal::open_standard();
    terminal->write("Conversations started in this folder, the latest first:\n" +
                    numbered_list(list));
    LineEditor editor(*terminal, [&terminal] {
        return static_cast<int>(terminal->size().value_or(WindowSize{}).cols);
    });
    const size_t count = std::min(list.size(), kListed);
    while (true) {
        LineResult r =
            editor.read_line("Continue which (1-" + std::to_string(count) + ", Enter for none)? ");
        if (r.kind != LineResult::line || r.text.find_first_not_of(' ') == std::string::npos)
            return std::nullopt;
        size_t used = 0;
        try {
            size_t n = std::stoul(r.text, &used);
            if (used == r.text.size() && n >= 1 && n <= count) return n - 1;
        } catch (const std::logic_error&) {
            // Not a number: asked again below.
        }
        terminal->write("Type a number from the list, or Enter for none.\n");
    }
}

// The conversation the command line names; nullopt once it said why there is none.
std::optional<SavedConversation> named_conversation(const CommandLine& cl,
                                                    const std::string& sessions_dir,
                                                    const std::string& cwd) {
    std::vector<SavedConversation> list = saved_conversations(sessions_dir, cwd);
    if (list.empty()) {
        std::fprintf(stderr,
                     "caretz: no conversation was started in %s; run caretz here to start one\n",
                     cwd.c_str());
        return std::nullopt;
    }
    if (cl.continue_latest) return list.front();
    if (!cl.resume_id.empty()) {
        try {
            return find_conversation(list, cl.resume_id);
        } catch (const std::invalid_argument& e) {
            std::fprintf(stderr, "caretz: %s\n", e.what());
            return std::nullopt;
        }
    }
    if (!Terminal::standard_is_terminal()) {
        std::fputs(numbered_list(list).c_str(), stdout);
        std::fputs(
            "caretz: there is no terminal to choose on; continue one with: caretz "
            "--resume ID\n",
            stderr);
        return std::nullopt;
    }
    if (auto chosen = choose(list)) return list[*chosen];
    return std::nullopt;
}

}  // namespace

std::variant<ResumedConversation, int> resume_conversation(const CommandLine& cl,
                                                           const std::string& sessions_dir,
                                                           const std::string& cwd) {
    std::optional<SavedConversation> saved = named_conversation(cl, sessions_dir, cwd);
    if (!saved) return 1;
    try {
        // Taken before reading, so that what is read is what nobody else goes on writing.
        std::optional<TranscriptLock> lock = TranscriptLock::take(saved->path);
        if (!lock) {
            std::fprintf(stderr,
                         "caretz: another Caretz is still writing the conversation %s; leave "
                         "that one first (or wait for it to end), then continue this one\n",
                         saved->session_id.c_str());
            return 1;
        }
        return ResumedConversation{saved->path, read_transcript(saved->path), std::move(*lock)};
    } catch (const std::runtime_error& e) {  // TranscriptDamaged included
        std::fprintf(stderr, "caretz: %s\n", e.what());
        return 1;
    }
}

}  // namespace caretz
