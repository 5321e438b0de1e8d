#pragma once

#include <sys/types.h>

#include <string>

#include "pty/unique_fd.h"

namespace caretz {

// Registers a PTY in utmp (so `who` and `w` list the session) for as long as this object lives,
// through libutempter's setgid helper, which must run on the host: inside the sandbox
// no-new-privileges takes its setgid away.
//
// The record is made and removed by a small process of its own (forked, not executed), which
// holds a copy of the master: it registers the PTY, then waits for this object to close a pipe,
// which also happens when Caretz dies by any signal (SIGTERM, SIGHUP, even SIGKILL), and removes
// the record then. So no record outlives Caretz, and nothing async-signal-unsafe has to run in a
// signal handler. Caretz's own SIGCHLD handling is untouched (libutempter sets SIGCHLD to SIG_DFL
// while its helper runs, in that process alone).
//
// Registration is a courtesy: when it fails (no helper, no utmp file) nothing is reported and
// nothing else changes.
class UtmpRecord {
public:
    UtmpRecord(int master_fd, const std::string& host);
    ~UtmpRecord();
    UtmpRecord(const UtmpRecord&) = delete;
    UtmpRecord& operator=(const UtmpRecord&) = delete;

    // Whether the record was made; waits for the helper's answer the first time.
    bool registered() const;

private:
    pid_t keeper_ = -1;
    UniqueFd hold_;            // closed: the keeper removes the record and ends
    mutable UniqueFd answer_;  // the keeper's one byte: '1' registered, '0' not
    mutable bool registered_ = false;
};

// Whether utmp lists a logged-in user on `line` (a terminal's path without "/dev/", "pts/3").
bool utmp_lists(const std::string& line);

}  // namespace caretz
