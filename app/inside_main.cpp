#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "pty/pty.h"
#include "sandbox/network/network_forwarder.h"
#include "sandbox/session_supervisor.h"
#include "sandbox/stand_in.h"

using namespace caretz;

// `caretz-inside`: what Caretz runs inside its sandboxes, bound there as /.caretz/caretz. It
// is a binary of its own, without the terminal, Unicode and command-line libraries the user's
// `caretz` loads, because every session start and every run of a watched program in the
// sandbox pays for loading it.
int main(int argc, char** argv) {
    // Bound read-only over sudo and the tools whose credential stores are hidden, it records
    // each run of them and runs the real program.
    if (auto program = program_for_stand_in()) return run_stand_in(*program, argc, argv);
    const std::string_view mode = argc > 1 ? argv[1] : "";
    // The session supervisor: bwrap's first process in session mode.
    if (argc == 2 && mode == "__supervise") return run_session_supervisor();
    // The fish session hook's way to drop typed-ahead input and count its lines (hooks/fish).
    if (argc == 2 && mode == "__drop-typeahead") {
        auto lines = drop_controlling_terminal_input();
        if (lines) std::printf("%d\n", *lines);
        return lines ? 0 : 1;
    }
    // In a per-command sandbox it runs the command and forwards the proxy port meanwhile.
    if (argc > 2 && mode == "__netforward")
        return run_network_forwarder_command(std::vector<std::string>(argv + 2, argv + argc));
    std::fprintf(stderr, "caretz-inside: Caretz runs this inside its sandboxes; run caretz\n");
    return 2;
}
