#include "agent/compaction.h"

#include <algorithm>

#include "pty/utf8.h"

namespace caretz {

namespace {

// What marks a result Caretz already cut, so it is never cut twice.
constexpr std::string_view kLeftOut = "[Caretz: the output was left out";
// Results this short are kept: cutting them saves less than the note costs.
constexpr size_t kShortResult = 600;
constexpr size_t kLastLineBytes = 200;
constexpr size_t kPerMessage = 16;

size_t message_bytes(const Message& m) {
    size_t bytes = kPerMessage + m.text.size() + m.tool_call_id.size();
    for (const auto& call : m.tool_calls)
        bytes += kPerMessage + call.id.size() + call.name.size() + call.arguments.size();
    return bytes;
}

std::string_view trimmed(std::string_view line) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t'))
        line.remove_suffix(1);
    return line;
}

// At most `bytes` of the text's start, not cut inside a UTF-8 character.
std::string_view utf8_prefix(std::string_view text, size_t bytes) {
    if (text.size() <= bytes) return text;
    while (bytes > 0 && is_utf8_continuation(static_cast<unsigned char>(text[bytes]))) --bytes;
    return text.substr(0, bytes);
}

// The text cut to `bytes`, with "..." where it was cut.
std::string cut(std::string_view text, size_t bytes) {
    if (text.size() <= bytes) return std::string(text);
    return std::string(utf8_prefix(text, bytes)) + "...";
}

// The command a shell call ran, from its arguments as the model wrote them.
std::string command_of(const ToolCall& call) {
    nlohmann::json args = arguments_object(call.arguments);
    if (args.contains("command") && args["command"].is_string())
        return args["command"].get<std::string>();
    if (args.contains("prompt") && args["prompt"].is_string())
        return "(task) " + args["prompt"].get<std::string>();
    return call.name + " " + args.dump();
}

std::string first_line(std::string_view text) {
    return std::string(trimmed(text.substr(0, text.find('\n'))));
}

}  // namespace

size_t conversation_bytes(const Conversation& conversation, size_t fixed) {
    size_t bytes = fixed;
    for (const auto& m : conversation) bytes += message_bytes(m);
    return bytes;
}

std::string shrunk_result(const std::string& result) {
    if (result.size() <= kShortResult || result.find(kLeftOut) != std::string::npos) return result;
    // Caretz's header: its own notes ("[Caretz: ...]", such as that the command ran outside the
    // sandbox), then the line with the exit status or the job's state.
    size_t body = 0;
    while (body < result.size()) {
        size_t end = result.find('\n', body);
        if (end == std::string::npos) end = result.size();
        const bool note = std::string_view(result).substr(body).starts_with("[Caretz:");
        body = std::min(result.size(), end + 1);
        if (!note) break;
    }
    std::string_view rest = std::string_view(result).substr(body);
    std::string_view last;
    for (size_t end = rest.size(); end > 0 && last.empty();) {
        size_t start = rest.rfind('\n', end - 1);
        start = start == std::string_view::npos ? 0 : start + 1;
        last = trimmed(rest.substr(start, end - start));
        end = start == 0 ? 0 : start - 1;
    }
    std::string out = result.substr(0, body);
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += kLeftOut;
    out += " to keep the conversation within the model's context window (";
    out += std::to_string(rest.size());
    out += " bytes); run the command again to see it.";
    if (last.empty()) {
        out += "]\n";
    } else {
        out += " Its last line was:]\n";
        out += cut(last, kLastLineBytes);
        out += '\n';
    }
    return out;
}

int shrink_old_results(Conversation& conversation, size_t keep_newest, size_t target,
                       size_t fixed) {
    size_t results = std::count_if(conversation.begin(), conversation.end(),
                                   [](const Message& m) { return m.role == Message::Role::tool; });
    size_t bytes = conversation_bytes(conversation, fixed);
    int shrunk = 0;
    for (auto& m : conversation) {
        if (bytes <= target || results <= keep_newest) break;
        if (m.role != Message::Role::tool) continue;
        --results;
        std::string cut_down = shrunk_result(m.text);
        if (cut_down.size() >= m.text.size()) continue;
        bytes -= m.text.size() - cut_down.size();
        m.text = std::move(cut_down);
        ++shrunk;
    }
    return shrunk;
}

size_t verbatim_tail_start(const Conversation& conversation, size_t tail_bytes) {
    size_t start = conversation.size();
    size_t bytes = 0;
    for (size_t i = conversation.size(); i-- > 0;) {
        bytes += message_bytes(conversation[i]);
        if (conversation[i].role == Message::Role::tool) continue;
        if (bytes > tail_bytes && start != conversation.size()) break;
        start = i;
        if (bytes > tail_bytes) break;
    }
    return start;
}

std::string summary_source(const Conversation& older, size_t max_bytes) {
    std::string text;
    for (const auto& m : older) {
        switch (m.role) {
            case Message::Role::user:
                text += "USER:\n" + m.text + "\n\n";
                break;
            case Message::Role::assistant:
                text += "ASSISTANT:\n" + m.text + (m.text.empty() ? "" : "\n");
                for (const auto& call : m.tool_calls)
                    text += "(called " + call.name + ": " + command_of(call) + ")\n";
                text += "\n";
                break;
            case Message::Role::tool:
                text += "RESULT:\n" + m.text + "\n\n";
                break;
        }
    }
    if (text.size() <= max_bytes) return text;
    const std::string gap = "\n[... " + std::to_string(text.size()) +
                            " bytes in all; the middle was left out to fit ...]\n\n";
    size_t room = max_bytes > gap.size() ? max_bytes - gap.size() : 0;
    size_t head = room * 2 / 5;
    size_t tail = room - head;
    std::string start(utf8_prefix(text, head));
    size_t from = text.size() - tail;
    while (from < text.size() && is_utf8_continuation(static_cast<unsigned char>(text[from])))
        ++from;
    return start + gap + text.substr(from);
}

std::string summary_instruction(const std::string& also_keep) {
    std::string text =
        "You are compacting the conversation of Caretz, a terminal agent for operations work, "
        "because it outgrew the model's context window. The user's message holds the older "
        "part of the conversation. Write a summary that will replace it, so that the work can "
        "go on without it. Keep, precisely and briefly: the user's goal and requests (in their "
        "own words where short); what was found (facts, numbers, names, hosts, paths, error "
        "messages); the commands that ran and their outcome, with Caretz's bracketed notes on "
        "a result kept word for word; the files changed; what the user decided or asked not "
        "to do; what is still to do. Leave out what no longer matters. Plain text, at most "
        "about 500 words. Do not call tools.";
    if (!also_keep.empty()) text += "\n\nThe user asks you to keep especially: " + also_keep;
    return text;
}

std::string plain_summary(const Conversation& older, size_t max_bytes) {
    std::vector<std::string> entries;
    for (size_t i = 0; i < older.size(); ++i) {
        const Message& m = older[i];
        if (m.role == Message::Role::user) entries.push_back("- the user: " + cut(m.text, 500));
        if (m.role != Message::Role::assistant) continue;
        for (const auto& call : m.tool_calls) {
            std::string outcome = "no result";
            for (size_t j = i + 1; j < older.size() && older[j].role == Message::Role::tool; ++j) {
                if (older[j].tool_call_id != call.id) continue;
                std::string line = first_line(older[j].text);
                if (line.starts_with("[Caretz:") && older[j].text.find('\n') != std::string::npos)
                    line =
                        "outside the sandbox, " +
                        first_line(
                            std::string_view(older[j].text).substr(older[j].text.find('\n') + 1));
                outcome = cut(line, 120);
            }
            entries.push_back("- ran " + cut(command_of(call), 300) + ": " + outcome);
        }
    }
    std::string text;
    for (size_t i = entries.size(); i-- > 0;) {
        if (text.size() + entries[i].size() + 1 > max_bytes) {
            text = "- (" + std::to_string(i + 1) + " earlier entries left out)\n" + text;
            break;
        }
        text = entries[i] + "\n" + text;
    }
    return text;
}

Conversation compacted(const Conversation& conversation, size_t tail_start,
                       const std::string& summary, bool written_by_model) {
    tail_start = std::min(tail_start, conversation.size());
    std::string text =
        written_by_model
            ? "[Caretz: the earlier part of this conversation was compacted to fit the model's "
              "context window; this summary of it was written by the model.]\n"
            : "[Caretz: the earlier part of this conversation was compacted to fit the model's "
              "context window; the model could not summarize it, so this is Caretz's list of "
              "the user's requests and the commands that ran.]\n";
    text += summary;
    auto latest = std::find_if(conversation.rbegin(), conversation.rend(),
                               [](const Message& m) { return m.role == Message::Role::user; });
    if (latest != conversation.rend() &&
        static_cast<size_t>(conversation.rend() - latest - 1) < tail_start)
        text += "\n\n[Caretz: the user's latest request, verbatim:]\n" + latest->text;
    Conversation out = {{Message::Role::user, text, {}, {}}};
    out.insert(out.end(), conversation.begin() + static_cast<long>(tail_start), conversation.end());
    return out;
}

}  // namespace caretz
