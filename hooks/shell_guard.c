// Loaded into the session shell through LD_PRELOAD, before the shell's main() runs. The shell
// holds the session nonce, and the commands it starts run as the same user: without this, any
// of them could read the nonce from /proc/<shell>/mem or attach to the shell with ptrace, and
// then forge the marks Caretz trusts. A process that is not dumpable can be neither read nor
// traced by a process without CAP_SYS_PTRACE, and the sandbox grants no capabilities.
// Dumpability is inherited by forks (subshells keep it) and reset by exec, so the programs the
// shell runs are as dumpable as ever: strace and gdb on them still work.
// It also keeps the nonce's descriptor from the shell's commands (see below).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

__attribute__((constructor)) static void guard_the_session_shell(void) {
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    // The descriptor the nonce arrives on is for the shell alone: the programs it starts lose it
    // on exec, even in fish, which cannot close it.
    const char* nonce_fd = getenv("CARETZ_NONCE_FD");
    if (nonce_fd) {
        char* end = NULL;
        long fd = strtol(nonce_fd, &end, 10);
        if (*nonce_fd && !*end && fd > 2 && fd < 1024) fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    }
    // This library is LD_PRELOAD's first entry; take it off before the shell reads its
    // environment, so the commands the shell starts do not load it. Entries the user had stay.
    const char* preload = getenv("LD_PRELOAD");
    if (!preload) return;
    const char* rest = strpbrk(preload, ": ");
    if (rest) rest += strspn(rest, ": ");
    if (rest && *rest)
        setenv("LD_PRELOAD", rest, 1);
    else
        unsetenv("LD_PRELOAD");
}
