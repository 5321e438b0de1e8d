#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escalation/host_probe.h"
#include "escalation/refusal.h"
#include "sandbox/environment.h"
#include "sandbox/policy.h"
#include "sandbox/program_run.h"

namespace caretz {

// Everything besides the output that decides whether a failure was the sandbox's refusal.
struct DetectionContext {
    std::string command = {};
    int exit_code = 0;
    std::string cwd = {};  // where the command ended; relative paths in messages resolve here
    const SandboxPolicy& policy;
    const HostProbe& host;
    std::string docker_host = {};  // $DOCKER_HOST on the host, may be empty
    std::string system_bus_socket = "/run/dbus/system_bus_socket";
    // Every run of a watched program (programs_to_watch()) by the command, recorded by Caretz's
    // stand-in inside the sandbox; nullopt when the sandbox could not watch them, and then the
    // command text is searched for sudo.
    std::optional<std::vector<ProgramRun>> program_runs = std::nullopt;
    // The environment the command ran with: where tools keep their credential stores
    // ($KUBECONFIG, $XDG_CONFIG_HOME, ...).
    Environment env = {};
};

// Decides, from a command's rendered output lines, what the sandbox provably refused it
// (DESIGN.md section 5):
//   write   the command failed and a line reports EROFS, EBUSY (a read-only bind), EACCES or
//           EPERM for a path the policy does not let the sandbox write but the host would let
//           the user write (HostProbe::may_write): where the host refuses too, no rerun helps;
//   hidden  the command failed and a line reports ENOENT for a path that exists on the host;
//           or it failed, a program of credential_fallbacks() ran (program_runs), its
//           fallback line is there, and a store it went without exists on the host, hidden;
//   sudo    the command ran sudo (a script's sudo included: the program_runs records) and the
//           output has sudo's own refusal line; one refusal per sudo command line run;
//   docker  a line says the Docker daemon is unreachable, its socket exists on the host, and
//           the policy does not bind it in;
//   bus     a line says the system bus is unreachable and its socket exists on the host.
// sudo, docker and bus count whatever the exit status. Lines stream in through observe_line();
// only lines that could be evidence are kept, and only a bounded number of them, so memory stays
// small whatever the command prints. finish() then applies the rules.
class RefusalDetector {
public:
    static constexpr std::size_t kHeadLines = 256;  // the first candidate lines kept
    static constexpr std::size_t kTailLines = 256;  // and the last
    static constexpr std::size_t kMaxLineBytes = 4096;

    void observe_line(std::string_view line);
    std::vector<Refusal> finish(const DetectionContext& ctx) const;

    std::size_t stored_lines() const { return head_.size() + tail_.size(); }
    std::size_t stored_bytes() const;

private:
    struct Candidate {
        std::uint64_t number;  // its line number in the output, to see which lines touch
        std::string text;
    };

    void keep(std::uint64_t number, std::string_view line);
    std::vector<const Candidate*> in_order() const;

    std::vector<Candidate> head_;
    std::vector<Candidate> tail_;  // a ring once full: tail_next_ is the oldest
    std::size_t tail_next_ = 0;
    std::uint64_t lines_seen_ = 0;
};

// The host's socket of the user's session bus: the path of $DBUS_SESSION_BUS_ADDRESS's
// "unix:path=" address, else $XDG_RUNTIME_DIR/bus, where systemd's user instance puts it; ""
// when `env` names neither.
std::string session_bus_socket(const Environment& env);

// Runs OutputLines and a RefusalDetector over a whole output: for tests and small outputs.
std::vector<Refusal> detect_refusals(const DetectionContext& ctx, std::string_view output);

}  // namespace caretz
