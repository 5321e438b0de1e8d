#pragma once

#include <future>
#include <mutex>
#include <optional>

#include "pty/unique_fd.h"
#include "sandbox/cache_layer.h"

namespace caretz {

// The private cache layer's user namespace, where the user is root, and its mount namespace,
// where the layer's overlays lie over the cache folders (cache_layer.h): held by these
// descriptors, not by a process of their own. bwrap starts in them (SpawnOptions::
// user_namespace, mount_namespace) and makes the sandbox's namespaces inside, as the user;
// they go, overlays and all, once the last process in them has ended and the last descriptor
// is closed.
struct LayerNamespaces {
    UniqueFd user, mount;
};

// Makes the namespaces for `layer` (CacheLayer::How::overlay), in a child that ends as soon as
// they are made, each overlay with its work folder (make_work_folders, `first`: the process's
// first sandbox). Throws SandboxStartError, saying why, when they cannot be made.
LayerNamespaces make_layer_namespaces(const CacheLayer& layer, bool first = false);

// The namespaces for a process's first sandbox, made on a thread of their own from the moment
// the layer is planned, while Caretz searches the repositories and lays out the sandbox: the
// child's namespaces and mounts then cost a one-shot exec no time of its own (bench/NOTES.md).
// Once they are taken, the thread removes what ended processes left in the store
// (remove_stale_work_folders). Later sandboxes make theirs as they start.
class LayerNamespacesAhead {
public:
    explicit LayerNamespacesAhead(const CacheLayer& layer);
    ~LayerNamespacesAhead();
    LayerNamespacesAhead(const LayerNamespacesAhead&) = delete;
    LayerNamespacesAhead& operator=(const LayerNamespacesAhead&) = delete;
    // Those made ahead the first time, waiting for them; new ones after. Throws
    // SandboxStartError as make_layer_namespaces does.
    LayerNamespaces take();

private:
    const CacheLayer layer_;
    std::mutex mutex_;
    std::optional<std::future<LayerNamespaces>> ahead_;  // until taken
    std::promise<void> taken_;
};

}  // namespace caretz
