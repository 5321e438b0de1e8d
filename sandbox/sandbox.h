#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pty/pty.h"
#include "pty/terminal.h"
#include "sandbox/environment.h"
#include "sandbox/policy.h"
#include "sandbox/program_run.h"
#include "sandbox/protection/repository_watch.h"

namespace caretz {

class NetworkProxy;

// The sandbox itself could not be set up (or died); the command did not run.
class SandboxStartError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// How one command talks to the user while it runs.
struct CommandIo {
    // The user's terminal (keys and window size), nullptr without one. Keys go to the command
    // only while it runs; keys typed once it is being interrupted stay for Caretz's prompt.
    Terminal* terminal = nullptr;
    // True for the user's own `!` commands: the command reads the terminal. False for the
    // model's: its stdin is /dev/null, only Ctrl-C and Ctrl-\ reach it, and a read from its
    // terminal gets end of input at once, since nobody types into it.
    bool stdin_from_terminal = false;
    std::function<void(std::string_view)> on_output;
    // True when on_output writes the bytes unchanged to `terminal` (a `!` command, `caretz
    // exec` on a terminal): while a command whose output comes from a terminal of its own
    // runs, the pump then passes output through the user's terminal unprocessed.
    bool output_to_terminal = false;
    // Called when Ctrl-C or Ctrl-\ is passed on to a command whose stdin is not the terminal,
    // so whoever started the command (a model's turn) can stop too.
    std::function<void()> on_interrupt_key;
    // Whether the network approval may ask the user about a destination this command wants
    // (user and model commands with someone to ask); otherwise such destinations are denied.
    bool may_ask_network = false;
};

// The signal a key from the user's terminal stands for while a command runs: Ctrl-C is SIGINT
// and Ctrl-\ SIGQUIT; 0 for any other key. Only these reach a command whose stdin is not the
// terminal.
int signal_for_key(char c);

// When to press an interrupt again for a command the user does not type into (the model's): a
// signal that lands while bash starts the command's next program reaches only bash, which then
// waits for that program, so the interrupt is repeated each second until the command ends.
class InterruptRepeat {
public:
    // The user pressed it now; the first repeat is due in a second.
    void start();
    void stop() { pending_ = false; }
    // How long a poll may wait for the next repeat; -1 when none is pending.
    int ms_until_due() const;
    // Whether a repeat is due now; if so, the next one is due a second later.
    bool take_due();

private:
    bool pending_ = false;
    std::chrono::steady_clock::time_point due_;
};

struct SandboxResult {
    int exit_code = 0;
    std::string cwd;            // where the command ended (session mode follows `cd`)
    bool shell_exited = false;  // the command ended the session shell; a fresh one follows
    // Every run of a watched program (SandboxSpec::watched_programs) by the command, as
    // Caretz's stand-in recorded it; nullopt when this sandbox could not watch programs (its
    // records file could not be made).
    std::optional<std::vector<ProgramRun>> program_runs;
};

// What a background job has come to so far.
struct JobReport {
    enum class State { running, exited, killed };
    State state = State::running;
    int status = 0;             // the exit code, or the signal that ended it
    std::string output_head;    // the first bytes the job wrote (stdout and stderr)
    std::string output_tail;    // the last bytes, when there were more than the head holds
    uint64_t output_bytes = 0;  // everything it wrote, including what lies between
};

// Background jobs: commands that run in the sandbox without a terminal while other commands
// go on, with their output kept in a file in the sandbox's private /tmp. Nobody is ever asked
// about them, so they run in the sandbox only.
class BackgroundJobs {
public:
    virtual ~BackgroundJobs() = default;
    // Starts `$SHELL -c command` where the session's commands are (its cwd) and returns the
    // job's id. Throws SandboxStartError when the sandbox is gone or the job cannot start.
    virtual int start(const std::string& command) = 0;
    // The job's state and output; nullopt for an id that was never started.
    virtual std::optional<JobReport> report(int id) = 0;
    // The job's state without its output; nullopt for an unknown id.
    virtual std::optional<JobReport> status(int id) = 0;
    // Ends the job's process group (SIGTERM, then SIGKILL if it lingers); false for an id
    // that is unknown or no longer running.
    virtual bool kill(int id) = 0;
};

// Runs commands in the sandbox: one long-lived session, or a fresh sandbox per command.
class Sandbox {
public:
    virtual ~Sandbox() = default;
    virtual SandboxResult run(const std::string& command, const CommandIo& io) = 0;
    virtual void resize(WindowSize) {}
    virtual std::string cwd() const = 0;
    // The session's background jobs; nullptr for a fresh sandbox per command, which has no
    // process that outlives a command.
    virtual BackgroundJobs* background_jobs() { return nullptr; }
    // The proxy that is the sandbox's only way to the network; nullptr for none.
    virtual NetworkProxy* network_proxy() { return nullptr; }
    // Makes sure nothing a command wrote into a git repository under the writable roots can
    // run on the host (RepositoryWatch): called after every command, before a rerun on the
    // host and before the next prompt. Returns what it found and did, for the user.
    virtual std::vector<RepositoryFinding> secure_repositories() { return {}; }
    // What the commands run from now on change in the writable roots, for the offer
    // (RepositoryWatch::begin_changes): end_changes(), after secure_repositories(), gives it,
    // nullopt where nothing is recorded.
    virtual void begin_changes() {}
    virtual std::optional<ChangeList> end_changes() { return std::nullopt; }
    // Caretz exits as soon as this sandbox is destroyed (a one-shot `caretz exec`): its end
    // need not wait until the sandbox's processes are gone. bwrap runs with --die-with-parent,
    // so the kernel ends whatever is left when Caretz exits.
    virtual void exit_follows() {}
};

struct SandboxSpec {
    SandboxPolicy policy;
    Environment env;    // what commands get (API keys already removed)
    std::string shell;  // the user's shell
    std::string cwd;
    WindowSize size;
    // The bytes must arrive exactly as the command wrote them, so the session's terminal adds
    // no '\r' before '\n': Caretz's output goes to a pipe or a file, or to a terminal that Caretz
    // does not own (its stdin is no terminal, or --print), which adds the '\r' itself.
    bool exact_output = false;
    // The watch over the writable roots' git repositories, shared by the sandboxes opened
    // from this spec; nullptr for none (a read-only policy).
    std::shared_ptr<RepositoryWatch> repositories;
    // This process's use of the private cache layer's store, held while sandboxes opened from
    // this spec may run; nullptr without a layer.
    std::shared_ptr<const CacheStoreUse> cache_store_use;
    // The programs whose runs Caretz records (sandbox/stand_in.h), by name, looked for in the
    // folders of $PATH in `env` and the usual system folders.
    std::vector<std::string> watched_programs;
};

// Session mode unless `fresh_per_command`; throws SandboxStartError when bwrap cannot start.
std::unique_ptr<Sandbox> open_sandbox(const SandboxSpec& spec, bool fresh_per_command);

}  // namespace caretz
