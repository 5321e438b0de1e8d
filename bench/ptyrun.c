// ptyrun: runs a command on a fresh pseudo-terminal that it owns and drains as fast as it can,
// like a very fast terminal emulator that draws nothing. Part of Caretz's benchmarks (bench/).
//
//   ptyrun [--stdin FILE | --type FILE --prompt TEXT] [--start TEXT] [--end TEXT]
//          [--count BYTE] [--tail FILE] [--rows N] [--cols N] -- COMMAND [ARG...]
//
// The command's stdout and stderr are the terminal; its stdin is the terminal too, or FILE.
// --type FILE types FILE's bytes on the terminal once the prompt TEXT shows, as a person at an
// interactive program would, and Ctrl-D at the first prompt after the --end TEXT, to end it.
// The clock runs from the fork (or from the first TEXT given with --start, when that appears in
// the output) to the end of the output (or to the first --end TEXT after the start): the end of
// the output is the last byte read or the command's exit, whichever is later. While it runs,
// ptyrun samples VmHWM (the peak resident set) of the command's own process every 10 ms.
// It prints one JSON object:
//   wall_s      seconds measured            total_s   seconds from the fork to the end
//   bytes       bytes read from the terminal in all     newlines, cr   '\n' and '\r' among them
//   count       how many of them were BYTE (--count), to check that a payload arrived whole
//   start_found, end_found   whether the markers were seen
//   exit        the command's exit status (128+N for a signal)
//   maxrss_kb   ru_maxrss from wait4: the largest of the command and its waited-for descendants
//   hwm_kb      the command's own process's last VmHWM sample (its peak RSS, to ~10 ms)
// --tail FILE keeps the last 64 KiB of output there, to check what came at the end.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum { kTail = 64 * 1024, kBuf = 1 << 20, kCarry = 256 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long vm_hwm_kb(pid_t pid) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    char* p = strstr(buf, "VmHWM:");
    return p ? strtol(p + 6, NULL, 10) : -1;
}

// A plain loop that the compiler vectorises: several GB/s, so counting costs the drain little.
static unsigned long long count_of(const unsigned char* p, size_t n, unsigned char b) {
    unsigned long long total = 0;
    while (n > 0) {
        size_t block = n < 255 ? n : 255;
        unsigned char c = 0;
        for (size_t k = 0; k < block; ++k) c += p[k] == b;
        total += c;
        p += block;
        n -= block;
    }
    return total;
}

// Finds TEXT (shorter than kCarry) in a stream that arrives in chunks: a match may straddle
// two of them, so the last bytes of each chunk are kept for the next one.
struct finder {
    const char* text;
    char carry[kCarry];
    size_t carry_len;
};

// Whether TEXT, when given, is one that a finder can look for.
static int findable(const char* text) {
    return !text || (strlen(text) > 0 && strlen(text) < kCarry);
}

// How many of the chunk's n bytes come up to the end of the first match, or -1 without one.
static long finder_find(struct finder* f, const char* data, size_t n) {
    size_t len = strlen(f->text);
    // A match across the two chunks: the kept bytes and the start of this one.
    char edge[2 * kCarry];
    size_t head = n < len - 1 ? n : len - 1, kept = f->carry_len;
    memcpy(edge, f->carry, kept);
    memcpy(edge + kept, data, head);
    const char* m = memmem(edge, kept + head, f->text, len);
    long at = m ? (long)(m - edge + len) - (long)kept : -1;
    if (at < 0 && (m = memmem(data, n, f->text, len))) at = (long)(m - data + len);
    if (at >= 0) {
        f->carry_len = 0;
    } else if (n >= len - 1) {
        f->carry_len = len - 1;
        memcpy(f->carry, data + n - f->carry_len, f->carry_len);
    } else {
        f->carry_len = kept + n < len - 1 ? kept + n : len - 1;
        memmove(f->carry, edge + kept + n - f->carry_len, f->carry_len);
    }
    return at;
}

static int write_file_to(int fd, const char* path) {
    char keys[4096];
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    ssize_t n = read(in, keys, sizeof keys);
    close(in);
    return n > 0 && write(fd, keys, (size_t)n) == n ? 0 : -1;
}

static void usage(void) {
    fprintf(stderr,
            "usage: ptyrun [--stdin FILE | --type FILE --prompt TEXT] [--start TEXT] [--end TEXT] "
            "[--count BYTE] [--tail FILE] [--rows N] [--cols N] -- COMMAND [ARG...]\n");
    exit(2);
}

int main(int argc, char** argv) {
    const char *stdin_file = NULL, *start = NULL, *end = NULL, *tail_file = NULL;
    const char *type_file = NULL, *prompt = NULL;
    int count_byte = -1;
    struct winsize ws = {.ws_row = 50, .ws_col = 200};
    int i = 1;
    for (; i < argc; ++i) {
        if (strcmp(argv[i], "--") == 0) {
            ++i;
            break;
        }
        if (i + 1 >= argc) usage();
        if (strcmp(argv[i], "--stdin") == 0)
            stdin_file = argv[++i];
        else if (strcmp(argv[i], "--type") == 0)
            type_file = argv[++i];
        else if (strcmp(argv[i], "--prompt") == 0)
            prompt = argv[++i];
        else if (strcmp(argv[i], "--start") == 0)
            start = argv[++i];
        else if (strcmp(argv[i], "--end") == 0)
            end = argv[++i];
        else if (strcmp(argv[i], "--count") == 0)
            count_byte = (unsigned char)argv[++i][0];
        else if (strcmp(argv[i], "--tail") == 0)
            tail_file = argv[++i];
        else if (strcmp(argv[i], "--rows") == 0)
            ws.ws_row = (unsigned short)atoi(argv[++i]);
        else if (strcmp(argv[i], "--cols") == 0)
            ws.ws_col = (unsigned short)atoi(argv[++i]);
        else
            usage();
    }
    if (i >= argc) usage();
    if (!findable(start) || !findable(end) || !findable(prompt) ||
        (type_file != NULL) != (prompt != NULL) || (type_file && stdin_file))
        usage();
    struct finder prompts = {.text = prompt, .carry_len = 0};
    struct finder starts = {.text = start, .carry_len = 0}, ends = {.text = end, .carry_len = 0};
    int typed = 0, quit = 0;

    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        perror("ptyrun: posix_openpt");
        return 2;
    }
    const char* slave_name = ptsname(master);
    ioctl(master, TIOCSWINSZ, &ws);

    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("ptyrun: fork");
        return 2;
    }
    if (pid == 0) {
        setsid();
        int slave = open(slave_name, O_RDWR);
        if (slave < 0) _exit(126);
        ioctl(slave, TIOCSCTTY, 0);
        int in = stdin_file ? open(stdin_file, O_RDONLY) : slave;
        if (in < 0) _exit(126);
        dup2(in, 0);
        dup2(slave, 1);
        dup2(slave, 2);
        if (slave > 2) close(slave);
        if (in > 2 && in != slave) close(in);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[i], argv + i);
        _exit(127);
    }

    char* buf = malloc(kBuf);
    char* tail = malloc(kTail);
    size_t tail_len = 0, tail_at = 0;  // bytes kept; where the next one goes
    unsigned long long bytes = 0, newlines = 0, crs = 0, counted = 0;
    int start_found = start == NULL, end_found = 0;
    double t_start = t0, t_end = 0, t_last_data = t0, t_reaped = 0, next_sample = t0;
    long hwm = -1;
    int status = 0, reaped = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    double quiet_since = 0;

    for (;;) {
        double t = now();
        if (!reaped && t >= next_sample) {
            long h = vm_hwm_kb(pid);
            if (h > hwm) hwm = h;
            next_sample = t + 0.010;
        }
        struct pollfd p = {master, POLLIN, 0};
        int r = poll(&p, 1, 10);
        if (r < 0 && errno != EINTR) break;
        if (r > 0) {
            ssize_t n = read(master, buf, kBuf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) break;  // EIO: every holder of the slave side is gone
            const char* data = buf;
            bytes += (unsigned long long)n;
            for (const char* q = data; (q = memchr(q, '\n', (size_t)(data + n - q))); ++q)
                ++newlines;
            for (const char* q = data; (q = memchr(q, '\r', (size_t)(data + n - q))); ++q) ++crs;
            if (count_byte >= 0)
                counted +=
                    count_of((const unsigned char*)data, (size_t)n, (unsigned char)count_byte);
            // The end counts only after the start, in this chunk's bytes that follow it.
            size_t from = 0;
            if (!start_found) {
                long at = finder_find(&starts, data, (size_t)n);
                if (at >= 0) {
                    start_found = 1;
                    t_start = now();
                }
                from = at >= 0 ? (size_t)at : (size_t)n;
            }
            if (start_found && end && !end_found &&
                finder_find(&ends, data + from, (size_t)n - from) >= 0) {
                end_found = 1;
                t_end = now();
            }
            // The tail is a ring: each byte is copied once, however small the reads.
            for (size_t left = (size_t)n, at = 0; left > 0;) {
                size_t room = kTail - tail_at, take = left < room ? left : room;
                memcpy(tail + tail_at, data + at, take);
                tail_at = (tail_at + take) % kTail;
                at += take;
                left -= take;
            }
            tail_len = tail_len + (size_t)n < kTail ? tail_len + (size_t)n : kTail;
            // The keys: the file at the first prompt, Ctrl-D at the first one after the end.
            if (prompt && (!typed || (end_found && !quit)) &&
                finder_find(&prompts, data, (size_t)n) >= 0) {
                if (!typed) {
                    typed = 1;
                    if (write_file_to(master, type_file) != 0) {
                        perror("ptyrun: --type");
                        kill(pid, SIGKILL);
                    }
                } else {
                    quit = 1;
                    const char eot = 4;
                    (void)!write(master, &eot, 1);
                }
            }
            t_last_data = now();
            quiet_since = 0;
            continue;
        }
        // Nothing to read for 10 ms: if the command has exited and its descendants stay
        // quiet for 2 s while holding the terminal, stop anyway.
        if (!reaped) {
            pid_t w = wait4(pid, &status, WNOHANG, &ru);
            if (w == pid) {
                reaped = 1;
                t_reaped = now();
            }
        }
        if (reaped) {
            if (quiet_since == 0)
                quiet_since = now();
            else if (now() - quiet_since > 2.0)
                break;
        }
    }
    if (!reaped && wait4(pid, &status, 0, &ru) == pid) t_reaped = now();
    double t_eof = t_last_data > t_reaped ? t_last_data : t_reaped;
    if (!end_found) t_end = t_eof;
    int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (tail_file) {
        FILE* f = fopen(tail_file, "wb");
        if (f) {
            // Oldest first: from the write position when the ring is full.
            if (tail_len == kTail) fwrite(tail + tail_at, 1, kTail - tail_at, f);
            fwrite(tail, 1, tail_len == kTail ? tail_at : tail_len, f);
            fclose(f);
        }
    }
    printf(
        "{\"wall_s\": %.6f, \"total_s\": %.6f, \"bytes\": %llu, \"count\": %llu, "
        "\"newlines\": %llu, \"cr\": %llu, \"start_found\": %s, \"end_found\": %s, "
        "\"exit\": %d, \"maxrss_kb\": %ld, \"hwm_kb\": %ld}\n",
        t_end - t_start, t_eof - t0, bytes, counted, newlines, crs, start_found ? "true" : "false",
        end_found ? "true" : "false", exit_code, ru.ru_maxrss, hwm);
    return 0;
}
