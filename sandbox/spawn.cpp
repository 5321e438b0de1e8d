#include "sandbox/spawn.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "pty/fd_io.h"
#include "pty/pty.h"
#include "pty/terminal.h"
#include "sandbox/sandbox.h"

namespace caretz {

namespace {

// What the child needs between vfork and exec, all made before: the child runs in the parent's
// memory (see spawn_process) and must not allocate.
struct ChildPlan {
    const SpawnOptions* options;
    char** argv;
    char** env;
    std::vector<std::pair<int, int>>* fds;
    std::vector<int>* staged;
    pid_t parent;
    const std::string* cannot_run;
};

// Says `what` and errno's text on stderr and exits with `status`.
[[noreturn]] void say_why_and_exit(const std::string& what, int status) {
    // strerrordesc_np, unlike strerror, never translates, so it never allocates.
    const char* reason = ::strerrordesc_np(errno);
    write_all(2, what);
    write_all(2, std::string_view(reason ? reason : "unknown error"));
    write_all(2, "\n");
    ::_exit(status);
}

[[noreturn]] void run_child(const ChildPlan& plan) {
    const SpawnOptions& options = *plan.options;
    reset_signals_for_exec();
    if (options.new_session) ::setsid();
    if (options.controlling_terminal >= 0 &&
        !attach_controlling_terminal(options.controlling_terminal))
        ::_exit(126);
    if (options.own_process_group || options.foreground_of) ::setpgid(0, 0);
    if (options.foreground_of) options.foreground_of->give_foreground_in_child();
    // Every source moves above the targets first, so placing one descriptor never overwrites
    // a source still to be placed; dup2 clears close-on-exec on the targets, so exactly these
    // reach the child, and close_range below drops the staged copies.
    std::vector<std::pair<int, int>>& fds = *plan.fds;
    std::vector<int>& staged = *plan.staged;
    for (size_t i = 0; i < fds.size(); ++i)
        staged[i] = ::fcntl(fds[i].first, F_DUPFD_CLOEXEC, 1000);
    for (size_t i = 0; i < fds.size(); ++i) ::dup2(staged[i], fds[i].second);
    int highest = 2;
    for (const auto& fd : fds) highest = std::max(highest, fd.second);
    ::close_range(static_cast<unsigned>(highest) + 1, ~0U, 0);
    if (options.die_with_parent) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != plan.parent) ::_exit(127);
    }
    if (!options.cwd.empty()) {
        bool entered = false;
        for (const auto& dir : options.cwd) {
            if (::chdir(dir.c_str()) == 0) {
                entered = true;
                break;
            }
        }
        if (!entered) ::_exit(126);
    }
    if (options.search_path) {
        ::execvpe(plan.argv[0], plan.argv, plan.env);
    } else {
        ::execve(plan.argv[0], plan.argv, plan.env);
    }
    say_why_and_exit(*plan.cannot_run, 127);
}

}  // namespace

pid_t vfork_child(void (*child)(const void*), const void* plan) {
    // The child runs in Caretz's memory until its exec, while this thread waits (vfork): no
    // copy of Caretz's page tables is made, which a fork would make only for exec to throw
    // away. Signals stay blocked until the child has set its handlers to the defaults, so no
    // handler of Caretz's runs in it.
    sigset_t all, mask;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &mask);
    const pid_t pid = ::vfork();
    if (pid == 0) {
        child(plan);
        ::_exit(127);  // never reached: `child` ends in exec or _exit
    }
    const int vfork_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    errno = vfork_errno;
    return pid;
}

pid_t spawn_process(const std::vector<std::string>& argv, const SpawnOptions& options) {
    // Everything the child uses is allocated here: between vfork and exec it must not allocate.
    std::vector<std::string> args = argv;
    std::vector<std::string> envs =
        options.env ? environment_strings(*options.env) : std::vector<std::string>();
    std::vector<char*> c_argv, c_env;
    for (auto& a : args) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    for (auto& e : envs) c_env.push_back(e.data());
    c_env.push_back(nullptr);
    std::vector<std::pair<int, int>> fds;
    if (options.stdin_fd >= 0) fds.emplace_back(options.stdin_fd, 0);
    if (options.stdout_fd >= 0) fds.emplace_back(options.stdout_fd, 1);
    if (options.stderr_fd >= 0) fds.emplace_back(options.stderr_fd, 2);
    fds.insert(fds.end(), options.fds.begin(), options.fds.end());
    std::vector<int> staged(fds.size());
    const std::string cannot_run = "caretz: cannot run " + argv.at(0) + ": ";
    ChildPlan plan{&options,   c_argv.data(), options.env ? c_env.data() : environ, &fds, &staged,
                   ::getpid(), &cannot_run};

    const pid_t pid = vfork_child(
        [](const void* child) { run_child(*static_cast<const ChildPlan*>(child)); }, &plan);
    // Set from both sides, so a signal sent right after the start reaches the group.
    if (pid > 0 && (options.own_process_group || options.foreground_of)) ::setpgid(pid, pid);
    return pid;
}

int exit_status_of(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return 1;
}

int wait_for_exit(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return 1;
    }
    return exit_status_of(status);
}

std::optional<std::string> output_of(const std::vector<std::string>& argv, SpawnOptions options,
                                     StderrTo stderr_to,
                                     std::optional<std::chrono::milliseconds> timeout) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    UniqueFd read_end(fds[0]), write_end(fds[1]);
    UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    options.stdin_fd = null.get();
    options.stdout_fd = write_end.get();
    options.stderr_fd = stderr_to == StderrTo::output ? write_end.get() : null.get();
    pid_t pid = spawn_process(argv, options);
    write_end.reset();
    if (pid < 0) return std::nullopt;
    std::string out;
    const auto deadline =
        std::chrono::steady_clock::now() + timeout.value_or(std::chrono::hours(24));
    bool ended = false;
    while (!ended) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{read_end.get(), POLLIN, 0};
        if (left.count() <= 0) break;
        int ready = ::poll(&p, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) break;
        char buf[8192];
        ssize_t n = ::read(read_end.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) out.append(buf, static_cast<size_t>(n));
        ended = n <= 0;
    }
    if (!ended) ::kill(pid, SIGKILL);
    const int status = wait_for_exit(pid);
    if (!ended || status != 0) return std::nullopt;
    return out;
}

namespace {

// The copy of caretz-inside that stands in for it once the file was replaced.
class ExecutableCopy {
public:
    ~ExecutableCopy() {
        if (path_.empty()) return;
        ::unlink(path_.c_str());
        ::rmdir(folder_.c_str());
    }
    // The copy's path, made from `running` the first time.
    const std::string& path(int running) {
        if (!path_.empty()) return path_;
        auto made = new_process_folder("caretz-exe-", "caretz");
        if (!made)
            throw SandboxStartError("cannot make a folder for a copy of caretz-inside: " +
                                    std::string(std::strerror(errno)));
        const std::string folder = *made;
        const std::string path = folder + "/caretz";
        UniqueFd out(
            ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0500));
        struct stat st {};
        bool copied = out.valid() && ::fstat(running, &st) == 0;
        for (off_t at = 0; copied && at < st.st_size;) {
            ssize_t n = ::sendfile(out.get(), running, &at, static_cast<size_t>(st.st_size - at));
            copied = n > 0 || (n < 0 && errno == EINTR);
        }
        if (!copied) {
            const std::string why = std::strerror(errno);
            ::unlink(path.c_str());
            ::rmdir(folder.c_str());
            throw SandboxStartError("cannot copy caretz-inside to " + folder + ": " + why);
        }
        folder_ = folder;
        path_ = path;
        return path_;
    }

private:
    std::string folder_, path_;
};

// caretz-inside as opened the first time it was asked for, or why it could not be.
struct InsideExecutable {
    UniqueFd fd;
    std::string error;
};

const InsideExecutable& inside_executable() {
    static const InsideExecutable opened = [] {
        std::error_code error;
        const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
        const std::string path = (self.parent_path() / kInsideExecutable).lexically_normal();
        InsideExecutable inside{UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), {}};
        if (error || !inside.fd.valid())
            inside.error = "cannot open " + path +
                           ", which Caretz runs in its sandbox: " + std::strerror(errno);
        return inside;
    }();
    return opened;
}

}  // namespace

void hold_inside_executable() {
    inside_executable();
}

UniqueFd open_inside_executable() {
    const InsideExecutable& inside = inside_executable();
    if (!inside.fd.valid()) throw SandboxStartError(inside.error);
    struct stat st {};
    if (::fstat(inside.fd.get(), &st) != 0 || st.st_nlink > 0) {
        UniqueFd fd(::fcntl(inside.fd.get(), F_DUPFD_CLOEXEC, 0));
        if (!fd.valid()) throw SandboxStartError("cannot duplicate a descriptor");
        return fd;
    }
    static ExecutableCopy copy;
    UniqueFd copied(::open(copy.path(inside.fd.get()).c_str(), O_RDONLY | O_CLOEXEC));
    if (!copied.valid()) throw SandboxStartError("cannot open the copy of caretz-inside");
    return copied;
}

std::optional<std::string> new_process_folder(std::string_view prefix, std::string_view file) {
    const std::string base = runtime_base();
    if (DIR* dir = ::opendir(base.c_str())) {
        while (const dirent* entry = ::readdir(dir)) {
            if (!std::string_view(entry->d_name).starts_with(prefix)) continue;
            const auto owner = static_cast<pid_t>(std::atol(entry->d_name + prefix.size()));
            const std::string folder = base + "/" + entry->d_name;
            struct stat st {};
            if (owner <= 0 || ::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
                st.st_uid != ::geteuid() || ::kill(owner, 0) == 0 || errno != ESRCH)
                continue;
            ::unlink((folder + "/" + std::string(file)).c_str());
            ::rmdir(folder.c_str());
        }
        ::closedir(dir);
    }
    std::string folder = base + "/" + std::string(prefix) + std::to_string(::getpid()) + "-XXXXXX";
    if (!::mkdtemp(folder.data())) return std::nullopt;
    return folder;
}

std::string runtime_base() {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    struct stat st {};
    if (runtime && runtime[0] == '/' && ::stat(runtime, &st) == 0 && S_ISDIR(st.st_mode) &&
        ::access(runtime, W_OK) == 0)
        return runtime;
    return "/tmp";
}

UniqueFd sealed_memory_file(const char* name, std::string_view bytes) {
    UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd.valid()) throw std::system_error(errno, std::generic_category(), "memfd_create");
    if (!write_all(fd.get(), bytes) || ::lseek(fd.get(), 0, SEEK_SET) != 0 ||
        ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) !=
            0)
        throw std::system_error(errno, std::generic_category(), std::string("writing ") + name);
    return fd;
}

std::string random_hex(size_t bytes) {
    std::string raw(bytes, '\0');
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error("getrandom failed");
        got += static_cast<size_t>(n);
    }
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (unsigned char c : raw) {
        hex += digits[c >> 4];
        hex += digits[c & 15];
    }
    return hex;
}

}  // namespace caretz
