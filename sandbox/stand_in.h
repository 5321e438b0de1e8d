#pragma once

#include <optional>
#include <string>

namespace caretz {

// Inside the sandbox caretz-inside (app/inside_main.cpp) is bound read-only over every watched
// program of the host: sudo, and the tools whose credential stores are hidden (see
// run_watch_arguments). Run as one of them, it appends a ProgramRun of its name, arguments
// and cwd to kRunRecordsPath, then executes the real program (bound under kRealProgramsDir)
// with the same arguments, so the program's output and exit status reach the command
// unchanged.

// The program this process stands in for: its watched name and the real binary to execute.
struct StoodInProgram {
    std::string name;
    std::string real;
};

// Which program this process stands in for, from the path the kernel ran it by
// (/proc/self/exe); nullopt when this process is no stand-in.
std::optional<StoodInProgram> program_for_stand_in();

// Records the run and executes the real program; returns only when that fails, with 127, the
// status a shell gives a program it cannot run.
int run_stand_in(const StoodInProgram& program, int argc, char** argv);

}  // namespace caretz
