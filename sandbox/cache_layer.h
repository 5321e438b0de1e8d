#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/environment.h"
#include "sandbox/spawn.h"

namespace caretz {

class HostFs;
struct SandboxPolicy;

// The tools' caches of the home (DESIGN.md section 4): seen in the sandbox with everything the
// host's caches hold and writable there, while what the sandbox writes lands in a private
// store under Caretz's state, one per workspace, kept across sessions and hidden from every
// sandbox (it lies in Caretz's hidden state folder). The host's caches are never written from
// a sandbox, so a poisoned entry (a `.pth` in pre-commit's cache, a crate's build.rs) can only
// ever run inside one.
//
// overlay: each cache folder is an overlay (the host's folder below, the store's folder on
// top), mounted before bwrap starts, in a user namespace of its own where the user is root
// (spawn.h, SpawnOptions::overlays); bwrap then makes the sandbox's own user namespace inside
// it, as the user, and binds the folder writable. No command ever runs with that namespace's
// privileges: bwrap drops them.
// variables: where no overlay can be had, the tools' own cache variables point at a private
// folder of the store (kPrivateCacheDir inside); the host's caches are then not seen.
struct CacheLayer {
    enum class How { none, overlay, variables };
    How how = How::none;
    std::string store;                 // this workspace's folder under Caretz's state
    std::vector<std::string> folders;  // host folders seen through an overlay
    // Tools' cache variables set in the sandbox, pointing into kPrivateCacheDir: every one in
    // the variables way; in the overlay way, those whose folder the host does not have yet
    // (an overlay needs a folder to lie on, and making one would leave it behind).
    std::map<std::string, std::string> variables;
    // Why the overlay way could not be had, for `caretz doctor` ("" with an overlay).
    std::string without_overlay;
};

// Where the store's own folder (CacheLayer::variables) is seen inside the sandbox.
inline constexpr const char* kPrivateCacheDir = "/.caretz/cache";

// The folder of the private cache layer of `workspace` under Caretz's state folder.
std::string cache_store(const std::string& state_dir, const std::string& workspace);

// Where the store keeps what the sandbox wrote over host folder `folder`: "upper" and "work"
// in it are the overlay's.
std::string cache_store_folder(const std::string& store, const std::string& folder);

// The overlays that make the layer, for spawn_process to mount before bwrap starts (none
// without CacheLayer::How::overlay). An overlay leaves its work folder behind, and the next
// mount over the same one removes it first: a slow rmdir on every sandbox's start, per folder
// (bench/NOTES.md). So the sandboxes of each Caretz process use work folders of their own,
// "work.PID" for `instance`, and those of ended processes go off the start's path
// (remove_stale_work_folders).
std::vector<OverlayMount> cache_overlays(const CacheLayer& layer, pid_t instance);

// Why an overlay cannot be had here ("" when it can): the kernel (unprivileged overlayfs came
// with Linux 5.11), user namespaces turned off, or a store on a file system without user
// extended attributes, which the overlay keeps its own bookkeeping in. `store_base` is the
// store or a folder it will be made in, which exists.
std::string overlay_unavailable_reason(const std::string& store_base);

// The layer for `policy` (its writable roots and hidden paths are final but for the protection
// of what the host runs later): the cache folders the tools use by default or as `env` moves
// them, those on the host that the sandbox cannot write already, with their store folders in
// `store`. `without_overlay` is overlay_unavailable_reason(). Pure: the host through `fs`.
CacheLayer plan_cache_layer(const SandboxPolicy& policy, const HostFs& fs, const Environment& env,
                            const std::string& store, const std::string& without_overlay);

// The tools' cache folder (as `env` places them) that writable root `root` is, lies in or
// holds; "" when none: the host runs what a sandbox puts there.
std::string cache_opened_by(const std::string& root, const std::string& home,
                            const Environment& env);

// Makes the store's folders (private to the user) so that the layer can be mounted by the
// sandboxes of process `instance`. Returns "" or what could not be made.
std::string make_cache_store(const CacheLayer& layer, pid_t instance);

// Removes the work folders that Caretz processes which have ended left in the store.
void remove_stale_work_folders(const CacheLayer& layer);

// The store's size on disk in bytes; 0 when it is missing.
std::uintmax_t cache_store_size(const std::string& store);

// Empties the store (`caretz cache clear`): a sandbox started later sees the host's caches as
// they are. Returns "" or what could not be removed.
std::string clear_cache_store(const std::string& store);

}  // namespace caretz
