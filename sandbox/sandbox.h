#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "pty/pty.h"
#include "sandbox/environment.h"
#include "sandbox/policy.h"

namespace caretz {

// The sandbox itself could not be set up (or died); the command did not run.
class SandboxStartError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// How one command talks to the user while it runs.
struct CommandIo {
    // The real terminal's input, forwarded to the command while it runs; -1 for none.
    int input_fd = -1;
    // True for the user's own `!` commands: the command reads the terminal. False for the
    // model's: its stdin is /dev/null and only Ctrl-C and Ctrl-\ reach it.
    bool stdin_from_terminal = false;
    std::function<void(std::string_view)> on_output;
    // Polled when a signal interrupts the wait: a new window size to pass on, if any.
    std::function<std::optional<WindowSize>()> take_resize;
};

struct SandboxResult {
    int exit_code = 0;
    std::string cwd;            // where the command ended (session mode follows `cd`)
    bool shell_exited = false;  // the command ended the session shell; a fresh one follows
};

// Runs commands in the sandbox: one long-lived session, or a fresh sandbox per command.
class Sandbox {
public:
    virtual ~Sandbox() = default;
    virtual SandboxResult run(const std::string& command, const CommandIo& io) = 0;
    virtual void resize(WindowSize) {}
    virtual std::string cwd() const = 0;
};

struct SandboxSpec {
    SandboxPolicy policy;
    Environment env;     // what commands get (API keys already removed)
    std::string shell;   // the user's shell
    std::string cwd;
    WindowSize size;
};

// Session mode unless `fresh_per_command`; throws SandboxStartError when bwrap cannot start.
std::unique_ptr<Sandbox> open_sandbox(const SandboxSpec& spec, bool fresh_per_command);

}  // namespace caretz
