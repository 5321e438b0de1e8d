#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/environment.h"

namespace caretz {

// Starts argv[0] (an absolute path) with exactly `env`, after making each (from, to) pair of
// `fds` the child's descriptor `to`. Every other descriptor is close-on-exec in Caretz.
// With `own_process_group` the child leads a new process group, so signals the terminal
// sends to Caretz's group do not reach it. Returns the pid, or -1 with errno set.
pid_t spawn_process(std::vector<std::string> argv, const Environment& env,
                    const std::vector<std::pair<int, int>>& fds, bool own_process_group = false);

// Puts signal dispositions and the mask back to defaults, for a child about to exec: an
// ignored SIGPIPE or a blocked SIGINT would otherwise be inherited by the command.
void reset_signals_for_exec();

// The exit status of a waitpid() status: the code, or 128+N for signal N.
int exit_status_of(int wait_status);

// Waits for the child and returns its exit status.
int wait_for_exit(pid_t pid);

// The running binary itself, by descriptor: bwrap binds it into a sandbox through
// /proc/self/fd/N, so what runs inside (the session supervisor, the network forwarder) is
// exactly this build even if the file on disk was replaced (an upgrade) after Caretz started.
// Throws SandboxStartError when it cannot be opened.
UniqueFd open_own_executable();

// A sealed memory file holding `bytes`, read from its start: what bwrap copies into a sandbox
// (--seccomp, --ro-bind-data) without a file on disk that anyone could swap. Throws
// std::system_error when it cannot be made.
UniqueFd sealed_memory_file(const char* name, std::string_view bytes);

// Random hex text from the kernel's generator, `bytes` bytes long before encoding.
std::string random_hex(size_t bytes);

}  // namespace caretz
