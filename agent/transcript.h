#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "agent/model_settings.h"

namespace caretz {

// The session's transcript: one JSON object per line (the user's prompts, the model's
// replies and tool calls, every tool result with where it ran), so the user can see
// afterwards what ran where. Readable by the owner only: it holds command output.
class Transcript {
public:
    // `path` is usually sessions_dir/<session id>.jsonl. Nothing is written until the first
    // entry, which `header` (the session's facts) precedes; the folder is created then.
    Transcript(std::string path, nlohmann::json header)
        : path_(std::move(path)), header_(std::move(header)) {}

    // $XDG_STATE_HOME/caretz/sessions (default ~/.local/state/caretz/sessions).
    static std::string sessions_dir(const std::string& home);

    // Appends `entry` with the time added. A transcript that cannot be written never stops
    // the session; the first failure is kept in problem() for the user to hear once.
    void record(nlohmann::json entry);

    const std::string& path() const { return path_; }
    // Why the last write failed; empty while all went well.
    const std::string& problem() const { return problem_; }

private:
    void append_line(const nlohmann::json& entry);

    std::string path_;
    nlohmann::json header_;
    bool started_ = false;
    std::string problem_;
};

// What a session's transcript starts with: the session, the model and the workspace.
nlohmann::json transcript_header(const std::string& session_id, const ModelSettings& model,
                                 const std::string& cwd);

}  // namespace caretz
