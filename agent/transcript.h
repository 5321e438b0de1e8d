#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "agent/model_settings.h"

namespace caretz {

// One Caretz process's hold on a transcript (flock): two processes appending to one
// conversation would interleave two histories that neither model saw. The kernel lets go when
// the process ends, however it ends.
class TranscriptLock {
public:
    // Takes the transcript at `path`. nullopt when another process holds it; throws
    // std::runtime_error when the file cannot be opened.
    static std::optional<TranscriptLock> take(const std::string& path);
    TranscriptLock(TranscriptLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    TranscriptLock& operator=(TranscriptLock&& other) noexcept {
        std::swap(fd_, other.fd_);
        return *this;
    }
    ~TranscriptLock();

private:
    explicit TranscriptLock(int fd) : fd_(fd) {}
    int fd_;
};

// The session's transcript: one JSON object per line (the user's prompts, the model's
// replies and tool calls, every tool result with where it ran), so the user can see
// afterwards what ran where. Readable by the owner only: it holds command output.
class Transcript {
public:
    // `path` is usually sessions_dir/<session id>.jsonl. Nothing is written until the first
    // entry, which `header` (the session's facts) precedes; the folder is created then.
    Transcript(std::string path, nlohmann::json header)
        : path_(std::move(path)), header_(std::move(header)) {}
    // Goes on writing the transcript an earlier session wrote (a resumed conversation), whose
    // lock the caller holds.
    explicit Transcript(std::string path) : path_(std::move(path)), started_(true) {}

    // $XDG_STATE_HOME/caretz/sessions (default ~/.local/state/caretz/sessions).
    static std::string sessions_dir(const std::string& home);
    // Where the prompt history is kept, beside the transcripts: $XDG_STATE_HOME/caretz/history
    // (default ~/.local/state/caretz/history), hidden from the sandbox with the rest of
    // Caretz's state.
    static std::string history_path(const std::string& home);

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
    std::optional<TranscriptLock> lock_;  // taken when this session creates the file
};

// What a session's transcript starts with: the session, the model and the workspace.
nlohmann::json transcript_header(const std::string& session_id, const ModelSettings& model,
                                 const std::string& cwd);

}  // namespace caretz
