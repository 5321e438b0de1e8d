#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/bwrap_command.h"
#include "sandbox/host_fs.h"
#include "sandbox/policy.h"
#include "sandbox/program_run.h"
#include "sandbox/sandbox.h"

namespace caretz {

// Caretz's side of the stand-in (stand_in.h): the programs it stands in for, and the host file
// the stand-in appends its records to, bound into the sandbox, which Caretz reads after each
// command.
//
// Why a file that sandboxed code can also write is good enough: a record only ever turns lines
// the output must hold too (sudo's own refusal, a tool's fallback for a missing credential
// store) into a refusal, which at most opens an offer showing the command in full; it never
// makes a command run anywhere. Whatever a forged record could say (any program, arguments,
// cwd), a command can make a genuine one say by running that program with those arguments in
// that folder, and any command may run it. So forging gains nothing over running the program;
// what the channel must guarantee is only that one record cannot smuggle in another (fields are
// length-prefixed), that its size is bounded, and that Caretz never trusts it for more than
// naming what was attempted.
class RunWatch {
public:
    // Creates the records file in a new folder only the user can enter, under
    // $XDG_RUNTIME_DIR (else /tmp); nullptr when it cannot, and then nothing is watched.
    static std::unique_ptr<RunWatch> create(WatchedPrograms programs);
    ~RunWatch();
    RunWatch(const RunWatch&) = delete;
    RunWatch& operator=(const RunWatch&) = delete;

    // The bwrap arguments that bind the stand-in and the records file in (run_watch_arguments).
    std::vector<std::string> bwrap_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                             const std::string& stand_in) const;
    // bwrap has mounted the file (a command ran inside; bwrap's "child-pid" comes earlier): its
    // name on the host is no longer needed.
    void forget_path();
    // The records written since the last take() or discard(), which empty the file.
    std::vector<ProgramRun> take();
    void discard();

private:
    RunWatch(WatchedPrograms programs, std::string dir, UniqueFd file)
        : programs_(std::move(programs)), dir_(std::move(dir)), file_(std::move(file)) {}
    std::string path() const { return dir_ + "/records"; }

    WatchedPrograms programs_;
    std::string dir_;
    UniqueFd file_;
    bool path_forgotten_ = false;
};

// What a sandbox for `spec` watches: its watched programs, looked for in its $PATH too.
WatchedPrograms watched_programs(const SandboxSpec& spec);

}  // namespace caretz
