#include "agent/transcript_replay.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

namespace caretz {

namespace {

// Why an entry does not have the shape its type needs; caught per line and turned into
// TranscriptDamaged with the line's number.
struct WrongShape {
    std::string why;
};

const nlohmann::json& required(const nlohmann::json& entry, const char* name,
                               nlohmann::json::value_t type) {
    if (!entry.contains(name) || entry[name].type() != type) {
        const char* kind = type == nlohmann::json::value_t::string  ? "a string"
                           : type == nlohmann::json::value_t::array ? "an array"
                                                                    : "a value";
        throw WrongShape{std::string("\"") + name + "\" must be " + kind};
    }
    return entry[name];
}

std::string required_string(const nlohmann::json& entry, const char* name) {
    return required(entry, name, nlohmann::json::value_t::string).get<std::string>();
}

// Whether `entry` has the field `name` with the string `value`. (json::value() would throw for a
// field of another type, and a transcript may hold anything.)
bool has(const nlohmann::json& entry, const char* name, const char* value) {
    return entry.is_object() && entry.contains(name) && entry[name] == value;
}

// The types that change the main agent's conversation: each belongs to one agent.
bool is_conversation_entry(const std::string& type) {
    return type == "user" || type == "assistant" || type == "tool_result" || type == "compaction" ||
           type == "clear";
}

class Replay {
public:
    void header(const nlohmann::json& entry) {
        if (!has(entry, "type", "session"))
            throw WrongShape{"the first line must be the session's header (\"type\": \"session\")"};
        out_.session_id = required_string(entry, "session_id");
        out_.cwd = required_string(entry, "cwd");
        out_.model = required_string(entry, "model");
    }

    void entry(const nlohmann::json& entry) {
        if (!entry.is_object()) throw WrongShape{"an entry must be a JSON object"};
        const std::string type = required_string(entry, "type");
        if (type == "model") {
            out_.model = required_string(entry, "model");
            return;
        }
        if (!is_conversation_entry(type)) return;
        if (required_string(entry, "agent") != "main") return;
        if (type == "user") {
            add({Message::Role::user, required_string(entry, "text"), {}, {}});
        } else if (type == "assistant") {
            assistant(entry);
        } else if (type == "tool_result") {
            std::string result = required_string(entry, "result");
            add({Message::Role::tool,
                 std::move(result),
                 {},
                 required_string(entry, "tool_call_id")});
        } else if (type == "compaction") {
            Conversation compacted;
            try {
                compacted = conversation_from_json(
                    required(entry, "conversation", nlohmann::json::value_t::array));
            } catch (const std::invalid_argument& e) {
                throw WrongShape{std::string("its \"conversation\" is not one: ") + e.what()};
            }
            start_over();
            for (auto& m : compacted) add(std::move(m));
        } else {  // clear
            start_over();
        }
    }

    ReplayedConversation finish() {
        close_unanswered();
        return std::move(out_);
    }

private:
    void assistant(const nlohmann::json& entry) {
        Message m{Message::Role::assistant, required_string(entry, "text"), {}, {}};
        if (entry.contains("tool_calls")) {
            for (const auto& call : required(entry, "tool_calls", nlohmann::json::value_t::array)) {
                if (!call.is_object()) throw WrongShape{"a tool call must be an object"};
                m.tool_calls.push_back({required_string(call, "id"), required_string(call, "name"),
                                        required_string(call, "arguments")});
            }
        }
        add(std::move(m));
    }

    // Adds `m` as both APIs need a conversation to be: every call of a reply has its result
    // before anything else follows, and a result answers a call of the reply before it. A
    // result for no such call (from a transcript edited by hand) is left out; calls are the
    // model's only.
    void add(Message m) {
        if (m.role == Message::Role::tool) {
            auto it = std::find(unanswered_.begin(), unanswered_.end(), m.tool_call_id);
            if (it == unanswered_.end()) return;
            unanswered_.erase(it);
        } else {
            close_unanswered();
            if (m.role != Message::Role::assistant) m.tool_calls.clear();
            for (const auto& call : m.tool_calls) unanswered_.push_back(call.id);
        }
        out_.conversation.push_back(std::move(m));
    }

    void start_over() {
        unanswered_.clear();
        out_.conversation.clear();
    }

    // Every call of the last reply must have a result before the conversation goes on: both
    // APIs reject a request where one is missing.
    void close_unanswered() {
        for (const auto& id : unanswered_) {
            out_.conversation.push_back({Message::Role::tool, kInterruptedByEnd, {}, id});
            ++out_.interrupted_calls;
        }
        unanswered_.clear();
    }

    ReplayedConversation out_;
    std::vector<std::string> unanswered_;
};

[[noreturn]] void damaged(const std::string& name, long line, const std::string& why) {
    throw TranscriptDamaged("the transcript " + name + " is damaged at line " +
                            std::to_string(line) + ": " + why +
                            "; nothing of it was loaded. Mend or delete that line to resume it");
}

}  // namespace

ReplayedConversation replay_transcript(std::istream& lines, const std::string& name) {
    Replay replay;
    std::string line;
    long number = 0;
    while (std::getline(lines, line)) {
        ++number;
        nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
        if (entry.is_discarded()) damaged(name, number, "it is not JSON");
        try {
            if (number == 1) {
                replay.header(entry);
            } else {
                replay.entry(entry);
            }
        } catch (const WrongShape& e) {
            damaged(name, number, e.why);
        }
    }
    if (number == 0) damaged(name, 1, "the file is empty");
    return replay.finish();
}

ReplayedConversation read_transcript(const std::string& path) {
    std::ifstream file(path);
    if (!file) throw TranscriptDamaged("cannot read the transcript " + path);
    return replay_transcript(file, path);
}

namespace {

// The header and the first prompt of the transcript at `path`; nullopt when its first line is
// no session header.
std::optional<SavedConversation> saved_conversation(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::string line;
    if (!std::getline(file, line)) return std::nullopt;
    nlohmann::json header = nlohmann::json::parse(line, nullptr, false);
    if (!has(header, "type", "session") || !header.contains("session_id") ||
        !header["session_id"].is_string() || !header.contains("cwd") || !header["cwd"].is_string())
        return std::nullopt;
    SavedConversation saved;
    saved.session_id = header["session_id"].get<std::string>();
    saved.cwd = header["cwd"].get<std::string>();
    saved.path = path.string();
    if (header.contains("time") && header["time"].is_string())
        saved.started = header["time"].get<std::string>();
    while (saved.first_prompt.empty() && std::getline(file, line)) {
        nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
        if (has(entry, "type", "user") && has(entry, "agent", "main") && entry.contains("text") &&
            entry["text"].is_string())
            saved.first_prompt = entry["text"].get<std::string>();
    }
    return saved;
}

}  // namespace

std::vector<SavedConversation> saved_conversations(const std::string& sessions_dir,
                                                   const std::string& cwd) {
    std::vector<SavedConversation> list;
    std::error_code error;
    for (const auto& file : std::filesystem::directory_iterator(sessions_dir, error)) {
        if (file.path().extension() != ".jsonl" || !file.is_regular_file(error)) continue;
        struct stat st;
        if (::stat(file.path().c_str(), &st) != 0) continue;
        // Only a header is read first: most transcripts belong to other folders.
        auto saved = saved_conversation(file.path());
        if (!saved || saved->cwd != cwd) continue;
        saved->last_write_ns =
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
        saved->bytes = static_cast<std::uintmax_t>(st.st_size);
        list.push_back(std::move(*saved));
    }
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
        return a.last_write_ns != b.last_write_ns ? a.last_write_ns > b.last_write_ns
                                                  : a.started > b.started;
    });
    return list;
}

const SavedConversation& find_conversation(const std::vector<SavedConversation>& list,
                                           const std::string& id) {
    const SavedConversation* found = nullptr;
    int matches = 0;
    for (const auto& saved : list) {
        if (saved.session_id == id) return saved;
        if (saved.session_id.starts_with(id)) {
            found = &saved;
            ++matches;
        }
    }
    if (matches == 1) return *found;
    if (matches == 0)
        throw std::invalid_argument("no conversation started in this folder has the id " + id +
                                    "; caretz --resume lists them");
    throw std::invalid_argument("the id " + id + " begins " + std::to_string(matches) +
                                " conversations' ids; give more of it (caretz --resume lists "
                                "them)");
}

}  // namespace caretz
