#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/host_fs.h"
#include "sandbox/policy.h"
#include "sandbox/sudo_record.h"

namespace caretz {

// Caretz's side of the sudo stand-in (sudo_stand_in.h): the host file the stand-in appends its
// records to, bound into the sandbox, which Caretz reads after each command.
//
// Why a file that sandboxed code can also write is good enough: a record only ever turns a line
// of sudo's own refusal, which the output must hold too, into a sudo refusal; it never makes
// a command run anywhere. Whatever a forged record could say (any arguments, any cwd), a
// command can make a genuine one say by running sudo with those arguments in that folder, and
// any command may run sudo. So forging gains nothing over running sudo; what the channel must
// guarantee is only that one record cannot smuggle in another (fields are length-prefixed), that
// its size is bounded, and that Caretz never trusts it for more than naming what was attempted.
class SudoWatch {
public:
    // Creates the records file in a new folder only the user can enter, under
    // $XDG_RUNTIME_DIR (else /tmp); nullptr when it cannot, and then nothing is watched.
    static std::unique_ptr<SudoWatch> create();
    ~SudoWatch();
    SudoWatch(const SudoWatch&) = delete;
    SudoWatch& operator=(const SudoWatch&) = delete;

    // The bwrap arguments that bind the stand-in and the records file in (sudo_watch_arguments).
    std::vector<std::string> bwrap_arguments(const SandboxPolicy& policy, const HostFs& fs,
                                             const std::string& stand_in) const;
    // bwrap has mounted the file (a command ran inside; bwrap's "child-pid" comes earlier): its
    // name on the host is no longer needed.
    void forget_path();
    // The records written since the last take() or discard(), which empty the file.
    std::vector<SudoRecord> take();
    void discard();

private:
    SudoWatch(std::string dir, UniqueFd file) : dir_(std::move(dir)), file_(std::move(file)) {}
    std::string path() const { return dir_ + "/records"; }

    std::string dir_;
    UniqueFd file_;
    bool path_forgotten_ = false;
};

}  // namespace caretz
