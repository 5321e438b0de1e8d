#pragma once

#include "app/command_line.h"
#include "app/config.h"

namespace caretz {

// `caretz exec COMMAND`: runs the command through the sandbox and exits with its status.
int run_exec(const CommandLine& cl, const Settings& settings);

}  // namespace caretz
