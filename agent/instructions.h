#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace caretz {

// The AGENTS.md files that reach the model (the file Codex, Cursor, Zed and Gemini CLI read
// too): a team's runbook, the user's habits, a repository's conventions. They are input for
// the model and nothing else: no part of the sandbox, the offer or the tools reads them.
struct InstructionFile {
    std::string path;
    size_t bytes = 0;  // the file's size
    size_t used = 0;   // what of it reached the model
};

struct Instructions {
    std::string text;  // for the system prompt; empty when there is no file
    std::vector<InstructionFile> files;
};

// Where a team's machine-wide AGENTS.md lives, beside Caretz's machine config.
inline constexpr const char* kMachineInstructionsDir = "/etc/caretz";

// All instruction files together reach the model up to this size; the rest is cut with a note.
inline constexpr size_t kInstructionBytes = 32 * 1024;

// The machine's file (`machine_dir`/AGENTS.md: /etc/caretz), the user's (`user_dir`/AGENTS.md:
// $XDG_CONFIG_HOME/caretz), then the workspace's: AGENTS.md in each folder from the top of the
// git repository that holds `cwd` down to `cwd` (only `cwd` outside a repository), in that
// order, the more specific last. Only regular files are read (a FIFO would block the start);
// unreadable ones are left out.
Instructions load_instructions(const std::string& machine_dir, const std::string& user_dir,
                               const std::string& cwd, size_t limit = kInstructionBytes);

}  // namespace caretz
