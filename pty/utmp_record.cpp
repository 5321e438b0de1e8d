#include "pty/utmp_record.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utempter.h>
#include <utmp.h>

#include <cerrno>
#include <cstring>

#include "pty/fd_io.h"
#include "pty/pty.h"

namespace caretz {

namespace {

// The keeper, in the forked child: async-signal-safe calls and libutempter's (which forks its
// helper, runs it and waits for it) only. Stdin is the master (the helper takes it there too),
// 3 the pipe whose end means "remove it", 4 where the answer goes.
[[noreturn]] void keep_record(const char* host) {
    // Neither the terminal's signals nor a kill of Caretz's process group may end it before
    // the record is gone; it ends with the pipe.
    ::setsid();
    reset_signals_for_exec();
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE}) ::signal(sig, SIG_IGN);
    const bool made = ::utempter_add_record(STDIN_FILENO, host) != 0;
    ssize_t ignored = ::write(4, made ? "1" : "0", 1);
    (void)ignored;
    ::close(4);
    char byte;
    while (::read(3, &byte, 1) != 0 && errno == EINTR) {
    }
    if (made) ::utempter_remove_record(STDIN_FILENO);
    ::_exit(0);
}

}  // namespace

UtmpRecord::UtmpRecord(int master_fd, const std::string& host) {
    int hold[2], answer[2];
    if (::pipe2(hold, O_CLOEXEC) != 0) return;
    UniqueFd hold_read(hold[0]), hold_write(hold[1]);
    if (::pipe2(answer, O_CLOEXEC) != 0) return;
    UniqueFd answer_read(answer[0]), answer_write(answer[1]);
    const char* host_name = host.c_str();
    keeper_ = ::fork();
    if (keeper_ == 0) {
        // 0: the master, 3: the hold pipe, 4: the answer; 1 and 2 /dev/null, not the terminal.
        if (!arrange_fds({master_fd, hold_read.get(), answer_write.get()}, {0, 3, 4})) ::_exit(1);
        const int null = ::open("/dev/null", O_RDWR);
        if (null < 0 || ::dup2(null, 1) != 1 || ::dup2(null, 2) != 2) ::_exit(1);
        if (null > 4) ::close(null);
        keep_record(host_name);
    }
    if (keeper_ < 0) return;
    hold_ = std::move(hold_write);
    answer_ = std::move(answer_read);
}

UtmpRecord::~UtmpRecord() {
    if (keeper_ <= 0) return;
    hold_.reset();
    // The record is gone once the keeper has ended.
    while (::waitpid(keeper_, nullptr, 0) < 0 && errno == EINTR) {
    }
}

bool UtmpRecord::registered() const {
    if (answer_.valid()) {
        char byte = '0';
        ssize_t n;
        while ((n = ::read(answer_.get(), &byte, 1)) < 0 && errno == EINTR) {
        }
        registered_ = n == 1 && byte == '1';
        answer_.reset();
    }
    return registered_;
}

bool utmp_lists(const std::string& line) {
    utmp key{};
    line.copy(key.ut_line, sizeof key.ut_line);
    ::setutent();
    bool listed = false;
    while (const utmp* entry = ::getutline(&key)) {
        if (entry->ut_type == USER_PROCESS) {
            listed = true;
            break;
        }
    }
    ::endutent();
    return listed;
}

}  // namespace caretz
