#include "sandbox/stand_in.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "pty/fd_io.h"
#include "pty/unique_fd.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/program_run.h"

namespace caretz {

namespace {

std::string read_link(const char* path) {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(path, buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// One write on a file opened for appending lands whole, so records of runs at the same time
// never interleave. The file is Caretz's (it creates and empties it outside); when it is
// missing or already holds a command's worth of records, this run goes unrecorded: the program
// still runs, and Caretz only misses the chance to offer.
void append_record(const ProgramRun& record) {
    UniqueFd fd(
        ::open(std::string(kRunRecordsPath).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) return;
    if (::lseek(fd.get(), 0, SEEK_END) >= static_cast<off_t>(kMaxRunRecordsBytes)) return;
    write_all(fd.get(), encode_program_run(record));
}

}  // namespace

std::optional<StoodInProgram> program_for_stand_in() {
    // Run by its own name under the runtime folder it is Caretz's supervisor or forwarder,
    // whatever a command may have put beside it there.
    const std::string self = read_link("/proc/self/exe");
    if (self.empty() || self.starts_with(std::string(kRuntimeDir) + "/")) return std::nullopt;
    // Outside a sandbox the folder is missing, so Caretz itself costs one failed opendir.
    DIR* dir = ::opendir(std::string(kRealProgramsDir).c_str());
    if (!dir) return std::nullopt;
    std::optional<StoodInProgram> found;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name(entry->d_name);
        if (name == "." || name == "..") continue;
        std::string real = std::string(kRealProgramsDir) + "/" + entry->d_name + self;
        if (::access(real.c_str(), F_OK) == 0) {
            found = StoodInProgram{entry->d_name, std::move(real)};
            break;
        }
    }
    ::closedir(dir);
    return found;
}

int run_stand_in(const StoodInProgram& program, int argc, char** argv) {
    ProgramRun record;
    record.program = program.name;
    record.cwd = read_link("/proc/self/cwd");
    for (int i = 0; i < argc; ++i) record.argv.emplace_back(argv[i]);
    append_record(record);
    ::execv(program.real.c_str(), argv);
    std::fprintf(stderr, "%s: cannot run %s: %s\n", program.name.c_str(), program.real.c_str(),
                 std::strerror(errno));
    return 127;
}

}  // namespace caretz
