#include "sandbox/run_watch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "sandbox/spawn.h"

namespace caretz {

namespace {

// A folder of new_process_folder()'s for the records file.
constexpr std::string_view kFolderPrefix = "caretz-runs-";
constexpr std::string_view kRecordsFile = "records";

}  // namespace

WatchedPrograms watched_programs(const SandboxSpec& spec) {
    auto path = spec.env.find("PATH");
    return {spec.watched_programs,
            path == spec.env.end() ? std::vector<std::string>{} : path_folders(path->second)};
}

std::unique_ptr<RunWatch> RunWatch::create(WatchedPrograms programs) {
    auto made = new_process_folder(kFolderPrefix, kRecordsFile);
    if (!made) return nullptr;
    const std::string dir = *made;
    UniqueFd file(::open((dir + "/" + std::string(kRecordsFile)).c_str(),
                         O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!file.valid()) {
        ::rmdir(dir.c_str());
        return nullptr;
    }
    return std::unique_ptr<RunWatch>(
        new RunWatch(std::move(programs), std::move(dir), std::move(file)));
}

RunWatch::~RunWatch() {
    forget_path();
}

std::vector<std::string> RunWatch::bwrap_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                                   const std::string& stand_in) const {
    return run_watch_arguments(policy, fs, programs_, stand_in, path());
}

void RunWatch::forget_path() {
    if (path_forgotten_) return;
    ::unlink(path().c_str());
    ::rmdir(dir_.c_str());
    path_forgotten_ = true;
}

std::vector<ProgramRun> RunWatch::take() {
    struct stat st {};
    if (::fstat(file_.get(), &st) != 0 || st.st_size == 0) return {};
    std::string text(
        std::min<std::size_t>(static_cast<std::size_t>(st.st_size), kMaxRunRecordsBytes), '\0');
    const ssize_t n = ::pread(file_.get(), text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    discard();
    return parse_program_runs(text);
}

void RunWatch::discard() {
    struct stat st {};
    if (::fstat(file_.get(), &st) != 0 || st.st_size == 0) return;
    // Emptying a file of Caretz's own fails only on an I/O error; its records then show again.
    if (::ftruncate(file_.get(), 0) != 0) return;
}

}  // namespace caretz
