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

extern char** environ;

// The environment entry NAME=..., found in `environ` itself. bash defines its own getenv,
// setenv and unsetenv, which the dynamic linker prefers to libc's even here, and which before
// bash's main() neither see nor change the environment bash is about to read: this library
// works on the array directly.
static char** find_entry(const char* name) {
    const size_t length = strlen(name);
    for (char** entry = environ; entry && *entry; ++entry)
        if (strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return entry;
    return NULL;
}

__attribute__((constructor)) static void guard_the_session_shell(void) {
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    // The descriptor the nonce arrives on is for the shell alone: the programs it starts lose it
    // on exec, even in fish, which cannot close it.
    char** nonce_fd = find_entry("CARETZ_NONCE_FD");
    if (nonce_fd) {
        const char* value = *nonce_fd + strlen("CARETZ_NONCE_FD=");
        char* end = NULL;
        long fd = strtol(value, &end, 10);
        if (*value && !*end && fd > 2 && fd < 1024) fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    }
    // This library is LD_PRELOAD's first entry; take it off before the shell reads its
    // environment, so the commands the shell starts do not load it. Entries the user had stay:
    // the entry is rewritten in place ("LD_PRELOAD=" moved up to the first of them).
    char** preload = find_entry("LD_PRELOAD");
    if (!preload) return;
    char* value = *preload + strlen("LD_PRELOAD=");
    const char* rest = strpbrk(value, ": ");
    if (rest) rest += strspn(rest, ": ");
    if (rest && *rest) {
        const size_t prefix = strlen("LD_PRELOAD=");
        char* moved = (char*)rest - prefix;
        memmove(moved, "LD_PRELOAD=", prefix);
        *preload = moved;
        return;
    }
    // Remove the entry, keeping the array's order.
    for (char** entry = preload; *entry; ++entry) entry[0] = entry[1];
}
