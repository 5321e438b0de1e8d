#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/environment.h"

namespace caretz {

class Terminal;

// How spawn_process starts a child. Every descriptor of Caretz is close-on-exec, so the child
// gets exactly the ones named here.
struct SpawnOptions {
    // The child's stdin, stdout and stderr; -1 leaves that one as Caretz has it.
    int stdin_fd = -1;
    int stdout_fd = -1;
    int stderr_fd = -1;
    // Further (from, to) pairs: Caretz's descriptor `from` becomes the child's `to`.
    std::vector<std::pair<int, int>> fds;
    // The child's environment; nullopt keeps Caretz's own.
    std::optional<Environment> env;
    // Where the child starts: the first folder of these that it can enter ({}: Caretz's cwd).
    // When none can be entered, the child exits with status 126.
    std::vector<std::string> cwd;
    // A process group of its own, so signals the terminal sends to Caretz's group pass it by.
    bool own_process_group = false;
    // A session of its own with no controlling terminal, so /dev/tty cannot be opened.
    bool new_session = false;
    // A session of its own whose controlling terminal is this PTY slave, which also becomes
    // the child's stdin, stdout and stderr (-1: none).
    int controlling_terminal = -1;
    // Leads its own process group as the foreground of the user's terminal, so the keys,
    // Ctrl-C and a password prompt are the child's alone (nullptr: not).
    const Terminal* foreground_of = nullptr;
    // Killed when Caretz dies, so no child outlives it unseen.
    bool die_with_parent = true;
    // Searches $PATH for argv[0] instead of taking it as a path.
    bool search_path = false;
};

// Starts a child that runs `child(plan)` in Caretz's memory, with every signal blocked, while
// this thread waits until it execs or ends (vfork). `child` must end in exec or _exit and
// allocate nothing; everything it uses is made before, in `plan`. Returns the pid, or -1 with
// errno set.
pid_t vfork_child(void (*child)(const void*), const void* plan);

// Starts argv as the options say. Returns the pid, or -1 with errno set when vfork failed;
// a child that cannot exec exits with status 127.
pid_t spawn_process(const std::vector<std::string>& argv, const SpawnOptions& options);

// The exit status of a waitpid() status: the code, or 128+N for signal N.
int exit_status_of(int wait_status);

// Waits for the child and returns its exit status.
int wait_for_exit(pid_t pid);

// Where output_of sends the program's stderr.
enum class StderrTo { null, output };

// What `argv` prints on stdout (and stderr, with StderrTo::output), run as `options` say with
// stdin from /dev/null; nullopt when it cannot start, exits with another status than 0, or is
// still running after `timeout` (it is killed then).
std::optional<std::string> output_of(const std::vector<std::string>& argv, SpawnOptions options,
                                     StderrTo stderr_to = StderrTo::null,
                                     std::optional<std::chrono::milliseconds> timeout = {});

// What Caretz runs inside its sandboxes (the session supervisor, the network forwarder, the
// stand-ins for watched programs): `caretz-inside`, at kInsideExecutable from the folder of
// Caretz's own binary. By descriptor: bwrap binds it into a sandbox through /proc/self/fd/N.
// It is opened once (hold_inside_executable), so every sandbox of this process runs the build
// it was opened as even if an upgrade replaced the file since. bwrap finds a bind's source by
// its path, which a replaced file no longer has: then the descriptor is of a copy, made once
// in a private folder under runtime_base() and removed when Caretz exits. Throws
// SandboxStartError when it cannot be opened or copied.
UniqueFd open_inside_executable();
// Opens caretz-inside now, when Caretz starts, so that its sandboxes run the build installed
// then. An error waits for the first open_inside_executable().
void hold_inside_executable();
inline constexpr const char* kInsideExecutable = "../libexec/caretz/caretz-inside";

// Where Caretz makes its private folders (the proxy's socket, the run records, the copy
// above): $XDG_RUNTIME_DIR when it is an absolute path to a folder this user may write, else
// /tmp.
std::string runtime_base();

// A new private folder "PREFIXPID-XXXXXX" under runtime_base() for one file named `file`;
// nullopt when it cannot be made. First the folders of that kind that a process of this
// user left behind when it ended without removing them (a crash, SIGKILL) go, with their file.
std::optional<std::string> new_process_folder(std::string_view prefix, std::string_view file);

// A sealed memory file holding `bytes`, read from its start: what bwrap copies into a sandbox
// (--seccomp, --ro-bind-data) without a file on disk that anyone could swap. Throws
// std::system_error when it cannot be made.
UniqueFd sealed_memory_file(const char* name, std::string_view bytes);

// Random hex text from the kernel's generator, `bytes` bytes long before encoding.
std::string random_hex(size_t bytes);

}  // namespace caretz
