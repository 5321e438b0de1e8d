#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/layer_mounts.h"
#include "sandbox/sandbox.h"
#include "sandbox/spawn.h"

namespace caretz {

class RunWatch;

// The private cache layer on its way into a sandbox that bwrap lays out (layer_gate.h).
class PendingCacheLayer {
public:
    PendingCacheLayer() = default;
    PendingCacheLayer(UniqueFd gate, CacheLayer layer);
    // Makes the layer's overlays, while bwrap lays the sandbox out (BwrapLaunch::finish).
    // Throws SandboxStartError when they cannot be made.
    void make();
    // Waits until the sandbox's first program hands over the sandbox's mount namespace, moves
    // the overlays in and lets it go on (attach_cache_layer). Called before Caretz waits for
    // anything of the user's to run in the sandbox: the first program waits for this before
    // it starts any. Throws SandboxStartError when the layer cannot be put in; the sandbox then
    // ends without running anything. Nothing without a layer, or a second time.
    void put_in();

private:
    UniqueFd gate_;  // Caretz's end
    CacheLayer layer_;
    LayerMounts mounts_;
};

// bwrap, started as soon as its descriptors are ready. It reads its arguments from a socket
// (`--args`), so its own start (exec, loading its libraries) runs on another CPU while Caretz
// makes what the rest of them name: the network proxy's socket, the run records, the
// stand-ins. Until finish() it has set nothing up; destroyed before that, it is killed.
class BwrapLaunch {
public:
    // Starts bwrap to run `command` in the view of the host `policy` describes, from `cwd`,
    // with the descriptors and environment of `options`, to which it adds its own (the
    // arguments, and the files it copies into private folders). bwrap reads
    // terminal_injection_filter() from descriptor kSeccompFd, which the caller passes.
    // With the policy's cache layer, `command` must be caretz-inside's (layer_gate.h), and
    // the caller puts the layer in (cache_layer()).
    // `in_root` goes to bwrap_arguments(). Throws SandboxStartError when it cannot start
    // bwrap.
    BwrapLaunch(const SandboxPolicy& policy, const std::string& cwd,
                const std::vector<std::string>& command, SpawnOptions options,
                const std::vector<std::string>& in_root = {});
    ~BwrapLaunch();
    BwrapLaunch(const BwrapLaunch&) = delete;
    BwrapLaunch& operator=(const BwrapLaunch&) = delete;

    // Hands bwrap the policy's arguments, then `extra`, the caller's own bwrap options, and
    // makes the cache layer's overlays meanwhile. Returns bwrap's pid, the caller's to wait
    // for from now on. A bwrap that has gone by then says why on its stderr and status
    // descriptors, as in any other failed start. Throws SandboxStartError when the overlays
    // cannot be made; bwrap has ended then, running nothing.
    pid_t finish(const std::vector<std::string>& extra);
    // The policy's cache layer, for the caller to put in (PendingCacheLayer::put_in) once it
    // has sent what the sandbox's first program needs to get ready; none without one.
    PendingCacheLayer cache_layer() { return std::move(cache_layer_); }

private:
    pid_t pid_ = -1;
    UniqueFd arguments_;  // Caretz's end of the socket bwrap reads its arguments from
    std::vector<std::string> policy_arguments_;
    PendingCacheLayer cache_layer_;
};

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
    void begin_changes() override;
    std::optional<ChangeList> end_changes() override;

private:
    SandboxSpec spec_;
    Environment env_;  // the spec's, with the proxy variables
    std::unique_ptr<NetworkProxy> proxy_;
    // Every command's runs of watched programs, one command at a time; nullptr when they
    // cannot be watched.
    std::unique_ptr<RunWatch> run_watch_;
};

}  // namespace caretz
