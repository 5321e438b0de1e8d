#pragma once

#include <string>

namespace caretz {

// Registers a PTY in utmp (so `who` and `w` list the session) for as long as it lives, through
// libutempter's setgid helper. Registration is a courtesy: when it fails (no helper, no
// privileges, inside a sandbox) nothing is reported and nothing else changes.
class UtmpRecord {
public:
    UtmpRecord(int master_fd, const std::string& host);
    ~UtmpRecord();
    UtmpRecord(const UtmpRecord&) = delete;
    UtmpRecord& operator=(const UtmpRecord&) = delete;

    bool registered() const { return registered_; }

private:
    int master_fd_;
    bool registered_ = false;
};

}  // namespace caretz
