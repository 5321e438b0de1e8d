#include "pty/utmp_record.h"

#include <signal.h>
#include <sys/prctl.h>
#include <utempter.h>

namespace caretz {

namespace {

// libutempter forks its helper and, until it has reaped it, sets SIGCHLD to SIG_DFL, which
// discards the signal. If one of our own children exits in that window, its SIGCHLD is lost and
// a loop that reaps on SIGCHLD would never notice. Raising SIGCHLD afterwards makes that loop
// look again; a spurious SIGCHLD costs one waitpid(WNOHANG).
void resend_possibly_lost_sigchld() {
    ::raise(SIGCHLD);
}

// With no_new_privs set (always inside bwrap) the helper's setgid bit does nothing, so it could
// never write utmp: not starting it saves a fork and an exec of each session's start.
bool helper_can_gain_privileges() {
    return ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1;
}

}  // namespace

UtmpRecord::UtmpRecord(int master_fd, const std::string& host) : master_fd_(master_fd) {
    if (!helper_can_gain_privileges()) return;
    registered_ = ::utempter_add_record(master_fd, host.c_str()) != 0;
    resend_possibly_lost_sigchld();
}

UtmpRecord::~UtmpRecord() {
    if (!registered_) return;
    ::utempter_remove_record(master_fd_);
    resend_possibly_lost_sigchld();
}

}  // namespace caretz
