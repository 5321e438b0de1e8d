#pragma once

#include <optional>
#include <string>

namespace caretz {

// Inside the sandbox Caretz's own binary is bound read-only over every sudo of the host (see
// sudo_stand_in_arguments). Run as sudo, it appends a SudoRecord of its arguments and cwd to
// kSudoRecordsPath, then executes the real sudo (bound under kRealSudoDir) with the same
// arguments, so sudo's output and exit status reach the command unchanged.

// The real sudo to execute when this process is the stand-in, from the path the kernel ran it
// by (/proc/self/exe); nullopt when this process is not the stand-in.
std::optional<std::string> real_sudo_for_stand_in();

// Records the run and executes `real_sudo`; returns only when that fails, with sudo's status
// for an error of its own (1).
int run_sudo_stand_in(const std::string& real_sudo, int argc, char** argv);

}  // namespace caretz
