#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/sandbox.h"

namespace caretz {

class RunWatch;

// What starts bwrap for one sandbox: its argv and the descriptors it reads.
struct SandboxCommand {
    std::vector<std::string> argv;
    // The files bwrap copies into the policy's private folders, for descriptors
    // kFirstCopiedFileFd and up (see bwrap_arguments).
    std::vector<UniqueFd> copied_files;

    // Adds the (from, to) pairs that hand bwrap the copied files.
    void add_copied_files(std::vector<std::pair<int, int>>& fds) const;
};

// The bwrap command (argv starting with the bwrap path) that runs `command` under `policy`,
// with `extra` bwrap options of the caller's after the policy's. bwrap reads
// terminal_injection_filter() from descriptor kSeccompFd, which the caller passes.
SandboxCommand sandbox_command(const SandboxPolicy& policy, const std::string& cwd,
                               const std::vector<std::string>& extra,
                               const std::vector<std::string>& command);

// The bwrap options that put caretz-inside (descriptor `executable_fd`) in at `inside`,
// have bwrap report its start on `status_fd`, and bind the proxy's socket and, when there is
// one, the run watch's stand-ins and records.
std::vector<std::string> caretz_binds(const SandboxPolicy& policy, int status_fd, int executable_fd,
                                      const std::string& inside, const NetworkProxy& proxy,
                                      const RunWatch* run_watch);

// Per-command mode (`--no-session`): every command gets a sandbox of its own, started with
// `$SHELL -c COMMAND` in the workspace. The user's own commands run on a PTY of their own
// (Caretz passes the keys on, and Ctrl-C and Ctrl-\ as signals to the command's process
// group); the model's read /dev/null and write into a pipe, and Ctrl-C stops them. Inside,
// caretz-inside (`__netforward`) runs the shell as its child and forwards the loopback
// proxy port to the one network proxy that serves all of this object's commands.
class FreshSandbox : public Sandbox {
public:
    // Starts the network proxy; throws SandboxStartError when it cannot.
    explicit FreshSandbox(SandboxSpec spec);
    ~FreshSandbox();
    SandboxResult run(const std::string& command, const CommandIo& io) override;
    std::string cwd() const override { return spec_.cwd; }
    NetworkProxy* network_proxy() override { return proxy_.get(); }
    // The next command's sandbox binds what this protects; nothing runs in between.
    std::vector<RepositoryFinding> secure_repositories() override;

private:
    SandboxSpec spec_;
    Environment env_;  // the spec's, with the proxy variables
    std::unique_ptr<NetworkProxy> proxy_;
    // Every command's runs of watched programs, one command at a time; nullptr when they
    // cannot be watched.
    std::unique_ptr<RunWatch> run_watch_;
};

}  // namespace caretz
