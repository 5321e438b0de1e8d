#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace caretz {

// One value in force and what set it: a config file and key, a flag, or Caretz's defaults.
struct SourcedValue {
    std::string value;
    std::string source;
};

// The sandbox Caretz gives commands in one folder, each value beside its source, for `/sandbox`
// and `caretz sandbox show`. Built once from the merged settings (app/sandbox_spec.h).
struct SandboxReport {
    std::string workspace;
    SourcedValue profile;  // value empty for none
    bool plan_mode = false;
    std::string plan_mode_source;
    SourcedValue allow_docker;  // "on" or "off"
    SourcedValue ask_sandbox_off;
    SourcedValue permission_timeout;  // "90s", or empty for waiting forever
    SourcedValue notify;
    std::vector<SourcedValue> writable;   // outside plan mode
    std::vector<SourcedValue> read_only;  // protected inside writable roots
    // What the host runs later, in the writable roots: each path and what protects it.
    struct HostRunLine {
        std::string path;
        std::string protection;  // "read-only", "cannot be made: /home/u is sealed", ...
        std::string source;      // what runs it, or the setting that opened it
    };
    std::vector<HostRunLine> host_run;
    // Folders in writable roots whose top is read-only (nothing can be made there).
    std::vector<SourcedValue> sealed;
    std::vector<SourcedValue> hidden;
    // The private cache layer (sandbox/cache_layer.h): how it is made ("overlay",
    // "variables", "off"), its store and the size of what it holds (only `caretz sandbox show`
    // measures it), and the caches it serves (folders, or NAME=value for tools' variables).
    SourcedValue cache_layer;
    std::string cache_store;
    std::optional<std::uintmax_t> cache_size;
    std::vector<SourcedValue> caches;
    std::vector<SourcedValue> visible;      // credential stores given back
    std::vector<SourcedValue> env_added;    // NAME=value
    std::vector<SourcedValue> env_removed;  // NAME
    std::vector<SourcedValue> allowed_domains;
    std::vector<SourcedValue> denied_domains;
    // Destinations the user allowed for this session (host:port); only a running session has
    // them.
    std::optional<std::vector<std::string>> session_network_allowances;
};

// The private /tmp, which stays writable in plan mode.
inline constexpr const char* kPrivateTmp = "/tmp";

// The writable roots in force: in plan mode only the private /tmp.
std::vector<SourcedValue> writable_now(const SandboxReport& report);

// For the terminal: one section per kind, one value a line with its source in brackets;
// everything that came from outside Caretz shown escaped.
std::string report_text(const SandboxReport& report);

// One JSON object: each value as {"value": ..., "source": ...}, lists of them for paths,
// environment and network patterns.
std::string report_json(const SandboxReport& report);

}  // namespace caretz
