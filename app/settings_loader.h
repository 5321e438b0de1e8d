#pragma once

#include <string>

#include "app/command_line.h"
#include "app/config.h"
#include "app/user_context.h"

namespace caretz {

// The config file this run reads: --config's, else $XDG_CONFIG_HOME/caretz/config.json.
std::string config_path(const CommandLine& cl, const UserContext& user);

// Reads that config file (a missing default file is an empty config); throws ConfigError.
ConfigFile read_config(const CommandLine& cl, const UserContext& user);

// The config file and the chosen profile, with the flags laid over them; throws ConfigError.
Settings load_settings(const CommandLine& cl, const UserContext& user);

}  // namespace caretz
