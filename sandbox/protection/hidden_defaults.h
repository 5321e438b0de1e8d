#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sandbox/environment.h"

namespace caretz {

// Where a path that is hidden by default lives.
enum class Under {
    root,         // an absolute path
    home,         // ~
    config_home,  // ~/.config, and $XDG_CONFIG_HOME as well when it is set elsewhere
    data_home,    // ~/.local/share, and $XDG_DATA_HOME as well when it is set elsewhere
    state_home,   // ~/.local/state, and $XDG_STATE_HOME as well when it is set elsewhere
};

// A path below one of those folders, for this user: in its default place, and where a
// variable of the user's moves it.
struct HostLocation {
    Under under;
    const char* path;  // below `under`
    // A variable that moves it: it names the folder holding `below_variable`, or the path
    // itself when `below_variable` is empty; nullptr for none. Both places count, since a
    // command inside can unset the variable or an rc file can change it.
    const char* variable = nullptr;
    const char* below_variable = "";
    bool variable_lists_paths = false;  // colon-separated, as $KUBECONFIG
};

// The absolute, normalised paths `location` stands for for a user with this home and
// environment. A relative path in a variable resolves against the workspace.
std::vector<std::string> location_paths(const HostLocation& location, const std::string& home,
                                        const std::string& workspace, const Environment& env);

// One row of the table of what every sandbox hides unless the user gives it back. Whatever a
// sandboxed command prints goes to the model's provider, so credentials must look missing.
struct HiddenByDefault {
    HostLocation where;
    // True for the credential stores that `sandbox.visible` may give back; false for what stays
    // hidden always (daemons' sockets, ssh and gpg keys, AWS keys, Caretz's own config and
    // state).
    bool showable;
};

// The table, in the order `--help` lists it.
const std::vector<HiddenByDefault>& hidden_by_default();

// A path hidden by default for this user.
struct DefaultHiddenPath {
    std::string path;  // absolute, normalised
    bool showable;
};

// The table's paths for a user with this home and environment. A relative path in a variable
// resolves against the workspace. A path inside another one is left out when the outer one
// hides it at least as firmly (an always-hidden path inside a showable one stays).
std::vector<DefaultHiddenPath> default_hidden_paths(const std::string& home,
                                                    const std::string& workspace,
                                                    const Environment& env);

// Why `path` (absolute, normalised) cannot be in `sandbox.visible`, as the end of a sentence
// that starts with the path ("which is not hidden by default ..."); nullopt when it can.
// `home` only shortens the paths in the sentence to `~/...`.
std::optional<std::string> visible_problem(const std::string& path,
                                           const std::vector<DefaultHiddenPath>& defaults,
                                           const std::string& home);

// How `--help`, the README and the man page name a location: "~/.kube (and each file in
// $KUBECONFIG)", "~/.config/gh/hosts.yml (and $GH_CONFIG_DIR/hosts.yml)".
std::string describe(const HostLocation& location);

}  // namespace caretz
