#pragma once

#include "pty/unique_fd.h"

namespace caretz {

// The descriptor number bwrap reads the filter from (`--seccomp N`), in both sandbox kinds.
constexpr int kSeccompFd = 9;

// A seccomp program, in a sealed memory file for bwrap's `--seccomp`, that makes the
// ioctls which push input into a terminal (TIOCSTI, and TIOCLINUX's paste) fail with EPERM
// in the sandbox. Without it, on kernels that still allow TIOCSTI (Debian 12's 6.1), a
// sandboxed command could type into the terminal it runs on: into the session's shell, queuing
// a line that runs when the command ends. Throws std::system_error when the file cannot be
// made.
UniqueFd terminal_injection_filter();

}  // namespace caretz
