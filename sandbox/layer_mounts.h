#pragma once

#include <string>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/cache_layer.h"

namespace caretz {

// The private cache layer's overlays (cache_layer.h), made before the sandbox starts and not
// yet attached anywhere: each a mount of its own (fsmount), made in a user namespace where the
// user is root, held by its descriptor. Once bwrap has laid out the sandbox, they are moved
// over the cache folders there (attach_cache_layer), before anything runs in it; bwrap itself
// starts as it does without the layer, and lays the sandbox out without the overlays in its
// mount table. They go with the sandbox's mount namespace, or when the descriptors close
// first.
struct LayerMounts {
    std::vector<std::string> targets;  // where each goes: the cache folder it lies over
    std::vector<UniqueFd> mounts;
    bool first = false;  // made for the process's first sandbox
    // The mount namespace the child made them in, a copy of the host's: its end (every mount
    // in it undone, and the kernel's wait for readers of the mount table to be done) is not on
    // the start's path when the descriptor goes after the overlays are in.
    UniqueFd held;
};

// Makes the overlays of `layer` (CacheLayer::How::overlay) in a child that ends as soon as
// they are made, each with its work folder (make_work_folders; the process's first sandbox
// reuses the store's own). Throws SandboxStartError, saying why, when they cannot be made.
// Caretz makes them while bwrap lays the sandbox out, on another CPU: then they cost a
// one-shot exec no time of its own (bench/NOTES.md).
LayerMounts make_layer_mounts(const CacheLayer& layer);

// The host's side of the layer's gate (layer_gate.h), whose end `gate` Caretz keeps: waits
// until the sandbox's first program hands over the sandbox's mount namespace, moves `mounts`
// over their folders there, and lets it go on. Returns "" when they are in place, or what
// went wrong; the sandbox then ends without running anything (it gets no go-ahead). A sandbox
// that ended before it got there (bwrap's start failed, and says why on its stderr) returns
// "" as well: nothing runs in it either.
std::string attach_cache_layer(int gate, const LayerMounts& mounts);

}  // namespace caretz
