#include "sandbox/sudo_stand_in.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "pty/fd_io.h"
#include "pty/unique_fd.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/sudo_record.h"

namespace caretz {

namespace {

std::string read_link(const char* path) {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(path, buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// One write on a file opened for appending lands whole, so records of sudo runs at the same
// time never interleave. The file is Caretz's (it creates and empties it outside); when it is
// missing or already holds a command's worth of records, this run goes unrecorded: sudo
// still runs, and Caretz only misses the chance to offer.
void append_record(const SudoRecord& record) {
    UniqueFd fd(::open(std::string(kSudoRecordsPath).c_str(),
                       O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) return;
    if (::lseek(fd.get(), 0, SEEK_END) >= static_cast<off_t>(kMaxSudoRecordsBytes)) return;
    write_all(fd.get(), encode_sudo_record(record));
}

}  // namespace

std::optional<std::string> real_sudo_for_stand_in() {
    // Run by its own name under the runtime folder it is Caretz's supervisor or forwarder,
    // whatever a command may have put beside it there.
    const std::string self = read_link("/proc/self/exe");
    if (self.empty() || self.starts_with(std::string(kRuntimeDir) + "/")) return std::nullopt;
    std::string real = std::string(kRealSudoDir) + self;
    if (::access(real.c_str(), F_OK) != 0) return std::nullopt;
    return real;
}

int run_sudo_stand_in(const std::string& real_sudo, int argc, char** argv) {
    SudoRecord record;
    record.cwd = read_link("/proc/self/cwd");
    for (int i = 0; i < argc; ++i) record.argv.emplace_back(argv[i]);
    append_record(record);
    ::execv(real_sudo.c_str(), argv);
    std::fprintf(stderr, "sudo: cannot run %s: %s\n", real_sudo.c_str(), std::strerror(errno));
    return 1;
}

}  // namespace caretz
