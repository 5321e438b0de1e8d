#pragma once

#include <optional>
#include <string>
#include <variant>

#include "app/config.h"

namespace caretz {

// sandbox_show: `caretz sandbox show`; cache_clear: `caretz cache clear`; doctor: `caretz
// doctor`; profiles: the profile names for a shell's completion.
enum class Mode { repl, exec, acp, sandbox_show, cache_clear, doctor, profiles };

// Everything the command line said, before config files are read.
struct CommandLine {
    Mode mode = Mode::repl;
    ConfigLayer flags;
    std::optional<std::string> profile;
    std::optional<std::string> config_file;
    std::string prompt;   // -p
    std::string command;  // caretz exec COMMAND
    bool plan = false;
    bool print = false;
    bool no_session = false;
    bool json = false;
    bool continue_latest = false;  // --continue
    bool resume = false;           // --resume [ID]
    std::string resume_id;         // its ID; empty: choose from a list
    std::string model;
    std::string provider;
    std::string base_url;
};

// Parses argv. Returns the command line, or an exit status when Caretz should stop now
// (--help, --version and `caretz completions SHELL` print and give 0; a usage error prints
// why and gives 2).
std::variant<CommandLine, int> parse_command_line(int argc, char** argv);

}  // namespace caretz
