#include "pty/utmp_record.h"

#include <signal.h>
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

}  // namespace

UtmpRecord::UtmpRecord(int master_fd, const std::string& host)
    : master_fd_(master_fd), registered_(::utempter_add_record(master_fd, host.c_str()) != 0) {
    resend_possibly_lost_sigchld();
}

UtmpRecord::~UtmpRecord() {
    if (!registered_) return;
    ::utempter_remove_record(master_fd_);
    resend_possibly_lost_sigchld();
}

}  // namespace caretz
