#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/environment.h"

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
// top), made in a user namespace of its own where the user is root, apart from any sandbox,
// and moved over the folder in the sandbox once bwrap has laid it out, before anything runs
// there (layer_mounts.h). No command ever runs with that namespace's privileges.
// A cache folder of the home that the host does not have yet (nor the folder it would lie in,
// as with a new account's ~/.cache) is no place for an overlay to lie on, and making it would
// leave it behind: the sandbox gets a link there to a folder of the
// store's own (kPrivateCacheDir), so a tool that makes it writes into the store. A link, not
// a mount: each mount costs bwrap a pass over the whole mount table. Once the host makes the
// folder, what the sandboxes wrote there starts the upper folder of its overlay
// (make_cache_store), so they find it on top of what the host's folder holds.
// variables: where no overlay can be had, the tools' own cache variables point at a private
// folder of the store (kPrivateCacheDir inside); the host's caches are then not seen.
// none: plan mode (nothing is writable but /tmp), or sandbox.cache_layer is false: the
// caches are as read-only as the rest of the home's configuration.
struct CacheLayer {
    enum class How { none, overlay, variables };
    How how = How::none;
    std::string store;                 // this workspace's folder under Caretz's state
    std::vector<std::string> folders;  // host folders seen through an overlay
    // Cache folders the host does not have yet, where the home is the folder above them
    // that the host has.
    std::vector<std::string> missing;
    // Tools' cache variables set in the sandbox, pointing into kPrivateCacheDir: every one in
    // the variables way; in the overlay way, those whose folder the host does not have yet
    // and the sandbox is not given (CacheLayer::missing).
    std::map<std::string, std::string> variables;
    // The folder of each store folder that takes this Caretz's writes: "upper", or, while
    // another Caretz of the workspace writes there (CacheStoreUse), "upper.PID" of its own,
    // which goes when it ends: two live overlays over one upper folder are undefined in
    // overlayfs.
    std::string upper = "upper";
    // Why the overlay way could not be had, for `caretz doctor` ("" with an overlay).
    std::string without_overlay;
};

// Where the store's own folder (CacheLayer::variables, CacheLayer::missing) is seen inside
// the sandbox.
inline constexpr const char* kPrivateCacheDir = "/.caretz/cache";

// The folder of the private cache layer of `workspace` under Caretz's state folder.
std::string cache_store(const std::string& state_dir, const std::string& workspace);

// Where the store keeps what the sandbox wrote over host folder `folder`: "upper" and "work"
// in it are the overlay's.
std::string cache_store_folder(const std::string& store, const std::string& folder);

// The name, in the store's own folder, of the folder for cache folder `folder` while the host
// lacks it (CacheLayer::missing).
std::string missing_cache_name(const std::string& folder);

// The folder that takes this Caretz's writes over host folder `folder` (CacheLayer::upper).
std::string cache_upper_folder(const CacheLayer& layer, const std::string& folder);

// A Caretz process's use of a store, held while it runs: shared by every Caretz whose
// sandboxes use it and taken alone by `caretz cache clear`, so that a store is never emptied
// under a live overlay; and the store's upper folders, which one Caretz at a time writes
// (CacheLayer::upper). flock(2) on two files beside the store, which clearing it keeps: the
// kernel lets go of them when the process ends, however it ends.
class CacheStoreUse {
public:
    // Waits while the store is being cleared. Returns nullopt, with `problem` set, when the
    // lock files cannot be made.
    static std::optional<CacheStoreUse> take(const std::string& store, std::string& problem);
    // This process writes the store's own upper folders.
    bool owns_upper() const { return upper_.valid(); }
    // Keeps, in the upper folders' lock file, the processes that this process's last sandbox
    // ends with: bwrap and the sandbox's first process (-1: not known). Their overlay goes
    // only once they have ended, after this process (a one-shot exec does not wait for them),
    // so the next Caretz to write the upper folders waits for them first
    // (wait_for_upper_writers). Nothing without owns_upper().
    void note_sandbox(pid_t bwrap, pid_t inside) const;

private:
    UniqueFd users_, upper_;
};

// One overlay of the layer, made from its store folder: the upper and work folders are named
// from there, as the mount table prints them inside the sandbox.
struct OverlayMount {
    std::string target;  // the folder it lies over, which is its lower folder as well
    std::string folder;  // its store folder (cache_store_folder), where the overlay is made
    std::string upper;   // CacheLayer::upper
    std::string work;    // make_work_folders()
};

// The overlays that make the layer (none without CacheLayer::How::overlay), with work folder
// `work` (make_work_folders) in each store folder.
std::vector<OverlayMount> cache_overlays(const CacheLayer& layer, const std::string& work);

// Makes the work folder in each store folder of the overlay way for one sandbox of process
// `instance`. Two live overlays over one work folder are undefined in overlayfs, and the
// kernel empties a work folder as it mounts over it. `reused`, for the first sandbox of the
// process that writes the store's upper folders (CacheLayer::upper), once the last writer's
// sandbox has ended (wait_for_upper_writers): "work", the same every time, so nothing is left
// to remove. Otherwise a new "work.PID.N" (a session and a per-command sandbox of one Caretz,
// a second Caretz of the workspace), removed once its process has ended
// (remove_stale_work_folders). Returns the folders' name, or nullopt when one cannot be made.
std::optional<std::string> make_work_folders(const CacheLayer& layer, pid_t instance,
                                             bool reused = false);

// Waits, for at most `longest`, until the processes the last writer of the upper folders of
// `store` noted (CacheStoreUse::note_sandbox) have ended, so that its overlays over them are
// gone before this process mounts its own: two live overlays over one upper folder are
// undefined (the kernel says so in its log). The last writer may be this process, whose
// earlier sandbox ended (a session started again). Returns at once for processes that are not
// bwrap (their pid was taken again).
void wait_for_upper_writers(const std::string& store, std::chrono::milliseconds longest);

// Why an overlay cannot be had here ("" when it can): the kernel (unprivileged overlayfs came
// with Linux 5.11), user namespaces turned off, or a store on a file system without user
// extended attributes, which the overlay keeps its own bookkeeping in. `store_base` is the
// store or a folder it will be made in, which exists. A folder that is `caretz_own` (its state
// folder) keeps the attribute the probe set, so that later starts only read it.
std::string overlay_unavailable_reason(const std::string& store_base, bool caretz_own);

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

// Makes the store's folders (private to the user) so that the layer can be mounted. Returns ""
// or what could not be made.
std::string make_cache_store(const CacheLayer& layer);

// Removes the work folders, and the upper folders of their own, that Caretz processes which
// have ended left in the store.
void remove_stale_work_folders(const CacheLayer& layer);

// The store's size on disk in bytes; 0 when it is missing.
std::uintmax_t cache_store_size(const std::string& store);

// Empties the store (`caretz cache clear`): a sandbox started later sees the host's caches as
// they are. Refuses while a Caretz uses the store (CacheStoreUse). Returns "" or why not.
std::string clear_cache_store(const std::string& store);

}  // namespace caretz
