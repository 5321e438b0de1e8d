#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/change_record.h"
#include "sandbox/policy.h"
#include "sandbox/protection/host_run_paths.h"
#include "sandbox/protection/repository_findings.h"
#include "sandbox/protection/search_record.h"

namespace caretz {

class InotifyReader;

// Makes sure that nothing a sandboxed command writes into a git repository under the writable
// roots runs when the user runs git there on the host: the repositories there at the start,
// and those that commands make or change (git init, git clone, git submodule add, git worktree
// add, or by hand).
//
// At the start it searches every folder of the writable roots (symlinks are not followed; one
// thread per core, four at most; every folder is listed, one without subfolders too, since any
// folder may hold a file of the table of what the host runs later) and adds the hooks
// and config of each git folder (anything with HEAD and objects or commondir: `.git`, nested
// clones, bare repositories, submodules in `.git/modules`, worktrees in `.git/worktrees`), each
// `.git` file and each `commondir` and `config.worktree`, to the policy's protected paths, so the
// sandbox binds them read-only. The search takes each folder's change time before it looks
// inside; then, while the sandbox starts, threads of their own give every folder an inotify
// watch and look at its change time again after it, so that anything made later shows as an
// event or as a change time that moved. A folder made or listed by a later search gets its watch
// before it is listed. A check (after each command, before a rerun on the host and before the
// next prompt) waits for those threads, reads the events and the change times of the folders
// still without a watch, searches new and changed folders, and for each repository that appeared or
// changed: makes its hooks and config read-only from then on (`protect`), moves aside every hook
// that is not a sample, cuts its config down to what a clone needs (git_config_filter.h), and moves
// aside a `commondir` that names a git folder the sandbox may write.
//
// Past the user's inotify watch limit, a folder on ext4, xfs or tmpfs gets a fanotify mark
// instead (unprivileged, reporting the folder's file handle and the entry's name), which has a
// limit of its own; a file system whose handles Caretz cannot be sure to match keeps the
// change time instead.
//
// It fails closed: a folder it cannot read is protected whole, and once both limits are
// reached, every folder left without a watch has its change time (ctime, which no command can
// set back) compared at every check, and is listed again when it moved.
class RepositoryWatch {
public:
    // Binds, inside one running sandbox, `read_only` read-only; returns "" on success or what
    // failed. A sandbox started afresh for each command needs
    // none: the next one binds protected_paths().
    using Protector = std::function<std::string(const std::vector<std::string>& read_only)>;

    // What the watches are for. `none` (one command, `caretz exec`, that no offer can follow):
    // no watch is added, so a short command takes none from the user's limit, and a check
    // compares every folder's change time. `repositories`: the repositories only. `changes`:
    // also what each command changes (begin_changes()), for the offer. `changes_if_few` (one
    // command that an offer can follow): `changes` in at most kFewFolders folders, else
    // `none`, since adding the watches costs about 3 us a folder, which a one-shot command
    // would wait for (the list then says why it is missing).
    enum class Watching { none, repositories, changes, changes_if_few };
    static constexpr size_t kFewFolders = 16384;

    // Searches the writable roots of `policy` and adds what it found to its protected paths
    // (also for a read-only policy: plan mode can be left during the session), then watches
    // them as `watching` says.
    //
    // The user's own git configs (`global_configs`: ~/.gitconfig, ~/.config/git/config) and
    // those of the repositories found are followed too: a config inside a writable root, a
    // file it includes (include.path, includeIf) and a core.hooksPath folder that lie in one
    // are protected as well (a hooks folder in a work tree with its hook manager's whole folder,
    // `.husky` for `.husky/_`), since git reads and runs them as it reads and runs `.git/hooks`;
    // for a missing one, the folder above it is sealed instead, and nothing is made on the host.
    //
    // With a `state_dir` (Caretz's own, hidden from every sandbox), the search of a large tree
    // is kept there (search_record.h), and the next start in the same roots lists again only
    // the folders whose change time moved since; the rest comes from the record.
    //
    // `trust` (ToolTrust::of_user()) says which of the table's entries a command makes later
    // run unasked on the host, though their program would ask first.
    RepositoryWatch(SandboxPolicy& policy, const std::vector<std::string>& global_configs,
                    const ToolTrust& trust, Watching watching = Watching::repositories,
                    const std::string& state_dir = "");
    ~RepositoryWatch();
    RepositoryWatch(const RepositoryWatch&) = delete;
    RepositoryWatch& operator=(const RepositoryWatch&) = delete;

    // What the start-up search could not do, one sentence each (no inotify).
    const std::vector<std::string>& start_notes() const { return notes_; }

    // A running sandbox (`owner`) that must get what later checks protect, until detached.
    void attach(const void* owner, Protector protect);
    void detach(const void* owner);

    std::vector<RepositoryFinding> check();

    // With Watching::changes: what the commands change in the writable roots from now on is
    // recorded, until end_changes(), which gives it, as the check() in between saw it. Waits
    // for the watches the start left for later first, so that none is missing while a command
    // runs. Without it: end_changes() gives nullopt.
    //
    // A thread reads the watches' events as they come, so that a command writing many files
    // does not fill the kernel's queue (fs.inotify.max_queued_events); while nothing is
    // recorded it keeps only the events a check needs (new entries).
    void begin_changes();
    std::optional<ChangeList> end_changes();

    // Caretz exits right after this (a one-shot `caretz exec`): the kernel's teardown of its
    // watches, which waits for the kernel's next grace period (8 to 16 ms with a single watch on
    // this machine), happens in a process of its own that holds the watches' descriptors until
    // Caretz has exited, rather than in Caretz's own exit.
    void exit_follows();

    // Paths protected since the start, for sandboxes started after it.
    const std::vector<std::string>& protected_paths() const { return added_; }

    // The tops of the work trees of the repositories the start-up search found (the folder
    // holding a `.git` folder or file).
    const std::vector<std::string>& work_trees() const { return work_trees_; }

    // The entries of the table of what editors and tools run from a repository's folders
    // (host_run_paths.h: repository_run_entries()) the start-up search found, at every depth.
    // One a command makes later is moved aside by a check (or, in a repository made in the
    // sandbox, made read-only), unless its program asks before it runs a new one.
    const std::vector<std::string>& run_entries() const { return run_entries_; }

private:
    using Unwatched = FolderSeen;
    // What a search found; each thread of a search fills one, merged afterwards.
    struct Found {
        std::vector<std::string> git_dirs;
        std::vector<std::string> git_links;  // `.git` files and symlinks
        std::vector<std::string> unreadable;
        std::vector<std::string> run_entries;              // what repository_run_entry() names
        std::vector<std::pair<int, std::string>> watches;  // added
        std::vector<std::pair<std::string, std::string>> marks;    // added: key, folder
        std::vector<std::pair<std::string, Unwatched>> unwatched;  // past the limits
        bool limit = false;  // no more watches nor marks can be added
        void merge(Found&& other);
    };
    // Searches `tops` and everything below them, with `parallel` on as many threads as the
    // machine has cores (four at most): each folder gets its watch (or has its change time
    // taken past the limit) before it is listed. Folders in hidden_ are left out, and with
    // `relisting` (tops listed before) so are those without a watch known already: they are
    // looked at by their change time.
    void walk(std::vector<std::string> tops, Found& found, bool parallel, bool relisting,
              bool watch);
    // The start's walk of roots_, or, with a record of the last start in the same roots in
    // `state_dir`, a look at the change time of each folder recorded and a walk of those that
    // moved; writes the record again when anything moved and the tree is large.
    void search_at_start(const SandboxPolicy& policy, const std::string& state_dir, Found& found);
    void finish_recording();                       // waits for the record's writing
    static constexpr size_t kRecordedFrom = 4096;  // folders
    struct FolderQueue;  // the folders still to search, shared by the threads of one walk
    // One thread of walk().
    void walk_folders(FolderQueue& queue, Found& found) const;
    // What one folder got: an inotify watch, else a fanotify mark, else neither, because it
    // is gone (or no folder now) or because no other folder would get one either (no
    // fanotify, the user's marks used up, a file system it does not mark): `exhausted`.
    struct FolderWatch {
        int wd = -1;
        std::string key;  // the mark's, in marked_
        bool exhausted = false;
    };
    FolderWatch watch_folder(const std::string& dir) const;
    // watch_folder() for a walk, into `found`; false when it is `exhausted` (found.limit is
    // set then), so the folder's change time must tell.
    bool add_watch(const std::string& dir, Found& found) const;
    // The fanotify mark watch_folder() falls back to past the inotify limit.
    FolderWatch add_mark(const std::string& dir) const;
    static void note_unwatched(const std::string& dir, const struct stat& st, Found& found);
    // Folders without a watch whose change time moved since they were listed (or that may
    // have changed unseen); they are forgotten, to be listed again. Those gone (or no folder
    // now) are forgotten too, and added to `gone`.
    std::vector<std::string> changed_unwatched(std::vector<std::string>* gone = nullptr);
    // Adds, on threads of their own (one per core, four at most), the watches the start-up
    // search left out to the folders in unwatched_, each followed by a look at its change time.
    // finish_promoting() waits for them and keeps what they did. Nothing else touches
    // unwatched_ or the watches meanwhile.
    void promote();
    void finish_promoting();
    std::vector<RepositoryFinding> checked();  // check(), with no watches being added
    void read_events(std::set<std::string>& candidates, std::vector<std::string>& new_dirs,
                     bool& overflow);
    // The inotify events in `events` (whole events, as read()), those from `recorded_from` on
    // also into record_ while it is open.
    void take_events(std::string_view events, size_t recorded_from,
                     std::set<std::string>& candidates, std::vector<std::string>& new_dirs,
                     bool& overflow);
    // Adds to record_ what is in the folders made while recording, made before any watch
    // (in each check, before the check makes anything).
    void record_made_folders();
    void read_mark_events(std::set<std::string>& candidates, std::vector<std::string>& new_dirs,
                          bool& overflow);
    // `name` was made in, or moved into, the watched folder `dir`.
    void on_new_entry(const std::string& dir, const std::string& name, bool folder,
                      std::set<std::string>& candidates, std::vector<std::string>& new_dirs);
    // Protects the git folder `path` names (a git folder, a `.git` file or symlink) where it
    // is new or changed; returns it then.
    std::optional<std::string> inspect(const std::string& path,
                                       std::vector<RepositoryFinding>& out);
    bool is_known(const std::string& path) const;
    void protect_now(const std::string& path);
    // Protects what editors run from the top of the work tree `top` of a repository made or
    // changed during the session.
    void protect_work_tree(const std::string& top);
    // Moves aside the table's entries made since the last check, or protects those in a
    // repository made in this one (`fresh`: its git folders).
    void take_made_run_entries(const std::vector<std::string>& fresh,
                               std::vector<RepositoryFinding>& out);
    void watch_config(const std::string& config);
    bool within_writable(const std::string& real) const;
    // Protects what `config` includes or names as its hooks folder, where the sandbox could
    // write it (`tops`: the work trees a relative core.hooksPath is relative to).
    void follow_config(const std::string& config, const std::vector<std::string>& tops,
                       SandboxPolicy& policy, int depth);
    // Protects `path` when it lies in a writable root: bound read-only when it exists, else the
    // deepest folder above it that exists is sealed; nothing is made on the host.
    void protect_named(const std::string& path, SandboxPolicy& policy);

    std::vector<std::pair<const void*, Protector>> sandboxes_;
    std::vector<std::string> roots_;  // the writable roots, symlinks resolved
    std::set<std::string> hidden_;
    std::string home_;
    UniqueFd inotify_;
    std::unordered_map<int, std::string> watched_;  // watch descriptor -> folder
    mutable std::once_flag fanotify_made_;
    mutable UniqueFd fanotify_;  // past the inotify limit; made by the first add_mark()
    std::unordered_map<std::string, std::string> marked_;       // mark key -> folder
    std::vector<std::pair<std::string, Unwatched>> unwatched_;  // past both limits
    std::vector<std::string> notes_;
    // Paths protected: those from the start with inode 0, later ones with their inode.
    std::map<std::string, ino_t> known_;
    std::vector<std::string> added_;
    std::vector<std::string> work_trees_;
    std::vector<std::string> run_entries_;
    std::set<std::string> run_known_;           // run_entries_, to look up
    std::set<std::string> made_run_entries_;    // seen made since the last check
    std::vector<std::string> sourced_missing_;  // missing files an `.envrc` found loads
    ToolTrust trust_;                           // the user's configs, as the caller read them
    timespec started_{};                        // when the start-up search began
    std::set<std::string> ours_;                // git folders protected during the session
    std::set<std::string> recheck_;  // of those, the ones whose hooks or config changed since
    std::unordered_map<int, std::string> config_watches_;  // their configs, watched for writes
    std::vector<std::string> read_only_now_;               // to bind, in one check
    struct Promotion {
        std::vector<std::thread> threads;
        std::atomic<bool> stop{false};
        struct Part {                                     // what one thread did
            std::vector<std::pair<int, size_t>> watched;  // watch descriptor, index in unwatched_
            std::vector<std::pair<std::string, size_t>> marked;  // mark key, index in unwatched_
            std::vector<size_t> changed;                         // changed since listed: list again
            bool limit = false;                                  // no more watches nor marks
        };
        std::vector<Part> parts;
    };
    std::unique_ptr<Promotion> promotion_;
    std::thread recording_;                  // writes the search record (search_at_start)
    bool limit_reached_ = false;             // no watch nor mark can be added
    bool limit_told_ = false;                // the watch_limit finding was given
    std::unique_ptr<InotifyReader> reader_;  // begin_changes()'s; with Watching::changes only
    uint32_t watch_events_;                  // what each folder's inotify watch reports
    ChangeRecord record_;
    bool record_open_ = false;  // between begin_changes() and end_changes()
    std::string unwatchable_;   // why Watching::changes has no watch to record from
};

// `policy` with the paths `watch` (may be null) protected since the start, for a sandbox that
// starts now.
SandboxPolicy with_protected_since(const SandboxPolicy& policy, const RepositoryWatch* watch);

}  // namespace caretz
