#include "sandbox/protection/repository_watch.h"

#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sandbox/host_fs.h"
#include "sandbox/path_names.h"
#include "sandbox/protection/host_run_paths.h"
#include "sandbox/protection/inotify_reader.h"
#include "sandbox/protection/watch_parts.h"

// RepositoryWatch's start and its checks: what the search and the watches found about
// repositories, and what is done about it. The search is repository_search.cpp's, the watches
// folder_watches.cpp's, the change record's framing change_framing.cpp's.

namespace caretz {

namespace {

// Creations and renames are all that can bring a repository, a hook or a redirect: the files
// git reads in a repository Caretz knows of are read-only inside already.
constexpr uint32_t kEvents = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW;

// What the offer's list of changes needs besides (Watching::changes).
constexpr uint32_t kChangeEvents = IN_DELETE | IN_MOVED_FROM | IN_MODIFY | IN_ATTRIB;

// Whether the watches record what commands change (RepositoryWatch::begin_changes).
bool records_changes(RepositoryWatch::Watching watching) {
    return watching == RepositoryWatch::Watching::changes ||
           watching == RepositoryWatch::Watching::changes_if_few;
}

// What git itself checks first (setup.c, is_git_directory): HEAD and a place for objects.
bool looks_like_git_dir(const std::string& dir) {
    auto objects = lstat_of(dir + "/objects");
    auto common = lstat_of(dir + "/commondir");
    return lstat_of(dir + "/HEAD") &&
           ((objects && S_ISDIR(objects->st_mode)) || (common && S_ISREG(common->st_mode)));
}

}  // namespace

RepositoryWatch::RepositoryWatch(SandboxPolicy& policy,
                                 const std::vector<std::string>& global_configs,
                                 const ToolTrust& trust, Watching watching,
                                 const std::string& state_dir)
    : home_(policy.home),
      trust_(trust),
      watch_events_(records_changes(watching) ? kEvents | kChangeEvents : kEvents) {
    // Only what exists is bound: a missing `.git/hooks` of a writable root without a repository
    // is found by a check once a command makes it, like any repository made later.
    for (const auto& p : policy.protected_paths)
        if (lstat_of(p)) known_.emplace(p, 0);
    for (const auto& h : policy.hidden) {
        hidden_.insert(h);
        if (auto real = resolved_path(h)) hidden_.insert(*real);
    }
    for (const auto& w : policy.writable) {
        auto real = resolved_path(w);
        auto st = real ? lstat_of(*real) : std::nullopt;
        if (!st || !S_ISDIR(st->st_mode) || policy.is_hidden(w)) continue;
        roots_.push_back(*real);
    }
    // A root inside another is searched with it.
    std::erase_if(roots_, [&](const std::string& r) {
        for (const auto& other : roots_)
            if (other != r && path_within(r, other)) return true;
        return false;
    });
    const bool watch_changes = watching != Watching::none;
    if (watch_changes) inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    const std::string no_inotify = inotify_.valid() ? "" : std::strerror(errno);
    if (watch_changes && !inotify_.valid())
        notes_.push_back("caretz: cannot watch the writable folders (inotify: " + no_inotify +
                         "); after every command Caretz looks at each of them for a change "
                         "instead, which slows commands down");
    Found found;
    // The watches come after the start (promote()): until then, change times tell.
    // The clock file times come from, so a file made after this never looks older.
    ::clock_gettime(CLOCK_REALTIME_COARSE, &started_);
    search_at_start(policy, state_dir, found);
    if (records_changes(watching)) {
        if (!inotify_.valid()) {
            unwatchable_ = "the writable folders cannot be watched (inotify: " + no_inotify + ")";
        } else if (watching == Watching::changes_if_few && unwatched_.size() > kFewFolders) {
            inotify_.reset();
            unwatchable_ = "a one-shot caretz exec watches at most " + std::to_string(kFewFolders) +
                           " folders, and the writable folders hold " +
                           std::to_string(unwatched_.size()) + " (the REPL watches them all)";
        } else {
            reader_ = std::make_unique<InotifyReader>(inotify_.get());
        }
    }
    auto protect = [&](const std::string& path) {
        if (known_.emplace(path, 0).second) policy.protected_paths.push_back(path);
    };
    for (const auto& dir : found.git_dirs) {
        for (const char* sub : {"/hooks", "/config"}) protect(dir + sub);
        for (const char* sub : {"/commondir", "/config.worktree"})
            if (lstat_of(dir + sub)) protect(dir + sub);
    }
    for (const auto& link : found.git_links) protect(link);
    for (const auto& dir : found.unreadable) protect(dir);
    run_entries_ = std::move(found.run_entries);
    run_known_.insert(run_entries_.begin(), run_entries_.end());
    for (const auto& path : run_entries_) {
        if (name_of(path) != ".envrc") continue;
        for (const auto& source : envrc_sources(parent_of(path), read_file(path).value_or("")))
            if (!lstat_of(source)) {
                if (auto real = resolved_path(parent_of(source)); real && within_writable(*real))
                    sourced_missing_.push_back(source);
            }
    }
    // The work trees a relative core.hooksPath in the user's own config points into.
    std::vector<std::string> tops;
    for (const auto& dir : found.git_dirs)
        if (name_of(dir) == ".git") tops.push_back(parent_of(dir));
    work_trees_ = tops;
    for (const auto& link : found.git_links)
        if (name_of(link) == ".git") work_trees_.push_back(parent_of(link));
    for (const auto& config : global_configs) {
        protect_named(config, policy);
        follow_config(config, tops, policy, 0);
    }
    for (const auto& dir : found.git_dirs)
        follow_config(dir + "/config", {name_of(dir) == ".git" ? parent_of(dir) : dir}, policy, 0);
    promote();
}

RepositoryWatch::~RepositoryWatch() {
    finish_recording();
    // What the threads did no longer matters: they only stop.
    if (!promotion_) return;
    promotion_->stop = true;
    for (auto& t : promotion_->threads) t.join();
}

bool RepositoryWatch::within_writable(const std::string& real) const {
    for (const auto& root : roots_)
        if (path_within(real, root)) return true;
    return false;
}

void RepositoryWatch::attach(const void* owner, Protector protect) {
    sandboxes_.emplace_back(owner, std::move(protect));
}

void RepositoryWatch::detach(const void* owner) {
    std::erase_if(sandboxes_, [&](const auto& s) { return s.first == owner; });
}

bool RepositoryWatch::is_known(const std::string& path) const {
    auto it = known_.find(path);
    if (it == known_.end()) return false;
    // Protected from the start, with the folders above it held in place by the sandbox; later
    // ones must still be the same file: a repository moved away and made again is new.
    if (it->second == 0) return true;
    auto st = lstat_of(path);
    return st && st->st_ino == it->second;
}

void RepositoryWatch::protect_now(const std::string& path) {
    auto st = lstat_of(path);
    known_[path] = st ? st->st_ino : 0;
    read_only_now_.push_back(path);
    added_.push_back(path);
}

std::vector<RepositoryFinding> RepositoryWatch::check() {
    // The watches the start left for later are all there first: comparing the change times of
    // the folders still without one would cost each check more than adding them costs once.
    finish_recording();
    finish_promoting();
    std::vector<RepositoryFinding> out = checked();
    if (limit_reached_ && !limit_told_ && !unwatched_.empty()) {
        limit_told_ = true;
        out.push_back({RepositoryFinding::Kind::watch_limit, roots_.front(),
                       std::to_string(unwatched_.size()), ""});
    }
    promote();
    return out;
}

std::vector<RepositoryFinding> RepositoryWatch::checked() {
    std::vector<RepositoryFinding> out;
    std::set<std::string> candidates;
    std::vector<std::string> new_dirs;
    bool overflow = false;
    if (inotify_.valid()) read_events(candidates, new_dirs, overflow);
    read_mark_events(candidates, new_dirs, overflow);
    // Before this check makes anything itself (a new repository's missing hooks, its editor
    // folders), which is not the command's doing.
    if (record_open_) record_made_folders();
    Found found;
    if (overflow) {
        // Events were lost: search everything again (watches already there stay).
        new_dirs = roots_;
        recheck_.insert(ours_.begin(), ours_.end());
    }
    // Folders listed before list again: what below them is known already stays out.
    std::vector<std::string> changed = changed_unwatched();
    const bool relisting = overflow || !changed.empty();
    std::move(changed.begin(), changed.end(), std::back_inserter(new_dirs));
    // The few folders a command usually makes are not worth starting threads for.
    const bool parallel = overflow || new_dirs.size() > 64;
    walk(std::move(new_dirs), found, parallel, relisting, /*watch=*/true);
    candidates.insert(found.git_dirs.begin(), found.git_dirs.end());
    candidates.insert(found.git_links.begin(), found.git_links.end());
    made_run_entries_.insert(found.run_entries.begin(), found.run_entries.end());
    read_only_now_.clear();
    std::set<std::string> clean;
    std::vector<std::string> fresh;
    for (const auto& dir : found.unreadable) {
        if (is_known(dir)) continue;
        protect_now(dir);
        out.push_back({RepositoryFinding::Kind::folder_protected, dir, "", ""});
    }
    for (const auto& path : candidates)
        if (auto dir = inspect(path, out)) fresh.push_back(*dir);
    take_made_run_entries(fresh, out);
    // A repository protected during the session whose hooks or config changed since: written
    // through a folder or file a command had open before; cleaned again.
    for (const auto& dir : recheck_)
        if (ours_.count(dir)) clean.insert(dir);
    recheck_.clear();
    clean.insert(fresh.begin(), fresh.end());
    std::string failure;
    if (!read_only_now_.empty())
        for (const auto& [owner, protect] : sandboxes_)
            if (failure.empty()) failure = protect(read_only_now_);
    if (!failure.empty()) {
        // Found again the next time anything in them changes.
        for (const auto& path : read_only_now_) known_.erase(path);
        for (const auto& dir : fresh) {
            ours_.erase(dir);
            out.push_back({RepositoryFinding::Kind::not_protected, dir, failure, ""});
        }
    }
    // Cleaned once the sandbox can no longer open them: nothing slips in between.
    for (const auto& dir : clean) neutralise_git_folder(dir, out);
    return out;
}

std::optional<std::string> RepositoryWatch::inspect(const std::string& path,
                                                    std::vector<RepositoryFinding>& out) {
    using Kind = RepositoryFinding::Kind;
    auto st = lstat_of(path);
    if (!st) return std::nullopt;
    std::string git_dir = path;
    if (name_of(path) == ".git" && !S_ISDIR(st->st_mode)) {
        // A `.git` file or symlink names the git folder; it must not be repointed either.
        const std::string base = parent_of(path);
        if (S_ISREG(st->st_mode)) {
            auto text = read_file(path, 4096);
            if (!text || !text->starts_with("gitdir: ")) return std::nullopt;
            git_dir = named_path(text->substr(8), base);
        }
        if (auto real_base = resolved_path(base); real_base && within_writable(*real_base)) {
            const std::string link = join_path(*real_base, ".git");
            if (!is_known(link)) protect_now(link);
        }
    }
    auto real = resolved_path(git_dir);
    if (!real || !within_writable(*real) || !looks_like_git_dir(*real)) return std::nullopt;
    const std::string& dir = *real;
    bool fresh = false;
    const std::string commondir = dir + "/commondir";
    if (auto text = read_file(commondir, 4096); text && !is_known(commondir)) {
        auto target = resolved_path(named_path(*text, dir));
        // A linked worktree's names its main repository, which is protected. One that names a
        // folder the sandbox may write goes aside before anything is bound to it.
        if (target && within_writable(*target) &&
            !(is_known(*target + "/hooks") && is_known(*target + "/config"))) {
            std::string aside = move_aside(commondir);
            if (!aside.empty())
                out.push_back({Kind::redirect_moved_aside, commondir, *target, aside});
        } else {
            protect_now(commondir);
            fresh = true;
        }
    }
    for (const char* sub : {"/hooks", "/config", "/config.worktree"}) {
        const std::string item = dir + sub;
        if (is_known(item)) continue;
        const bool folder = sub == std::string("/hooks");
        const bool needed = folder || sub == std::string("/config");
        auto item_st = lstat_of(item);
        // Only a real folder or file can be bound; anything else goes aside for an empty one.
        if (item_st && (folder ? !S_ISDIR(item_st->st_mode) : !S_ISREG(item_st->st_mode))) {
            std::string aside = move_aside(item);
            if (aside.empty()) continue;
            out.push_back(
                {folder ? Kind::hook_disabled : Kind::config_moved_aside, item, "", aside});
            item_st.reset();
        }
        if (!item_st && !needed) continue;
        if (!item_st &&
            !create_empty_path(item, folder ? HostFs::Type::directory : HostFs::Type::file))
            continue;
        protect_now(item);
        if (!folder) watch_config(item);
        fresh = true;
    }
    if (!fresh) return std::nullopt;
    ours_.insert(dir);
    if (name_of(dir) == ".git") protect_work_tree(parent_of(dir));
    out.push_back({Kind::protected_repository, dir, "", ""});
    return dir;
}

void RepositoryWatch::protect_work_tree(const std::string& top) {
    // As at the start (host_run_paths.h): what editors run from the top of a work tree is
    // read-only from now on; one made later is take_made_run_entries()'s.
    for (const auto& entry : repository_run_entries()) {
        const std::string path = join_path(top, entry.name);
        if (!is_known(path) && lstat_of(path)) protect_now(path);
    }
}

void RepositoryWatch::take_made_run_entries(const std::vector<std::string>& fresh,
                                            std::vector<RepositoryFinding>& out) {
    using Kind = RepositoryFinding::Kind;
    static const RepositoryRunEntry sourced = {
        "", false, "an allowed .envrc loads it; direnv asks only about the .envrc itself"};
    // What an `.envrc` sources is looked at by name: it has no name of its own to be met by.
    for (const auto& path : sourced_missing_)
        if (lstat_of(path)) made_run_entries_.insert(path);
    for (const auto& path : made_run_entries_) {
        const bool is_sourced = std::find(sourced_missing_.begin(), sourced_missing_.end(), path) !=
                                sourced_missing_.end();
        const auto* entry =
            is_sourced ? &sourced : repository_run_entry(name_of(parent_of(path)), name_of(path));
        auto st = lstat_of(path);
        if (!entry || trust_.asks_first(*entry, path) || run_known_.count(path) || is_known(path) ||
            !st)
            continue;
        // One the start-up search did not see, untouched since (in a folder moved in from
        // elsewhere, whose files keep their change time): the user's own, read-only from now on.
        const bool before =
            st->st_ctim.tv_sec < started_.tv_sec ||
            (st->st_ctim.tv_sec == started_.tv_sec && st->st_ctim.tv_nsec < started_.tv_nsec);
        if (before) {
            protect_now(path);
            continue;
        }
        // In a repository made in this check (a clone): what came with it stays, read-only
        // from now on, and the user is told.
        const bool cloned = std::any_of(fresh.begin(), fresh.end(), [&](const std::string& dir) {
            return name_of(dir) == ".git" && path_within(path, parent_of(dir));
        });
        if (cloned) {
            protect_now(path);
            out.push_back({Kind::run_entry_protected, path, entry->reason, ""});
            continue;
        }
        std::string aside = move_aside(path);
        if (aside.empty())
            out.push_back({Kind::not_protected, path, "it cannot be moved aside", ""});
        else
            out.push_back({Kind::run_entry_moved_aside, path, entry->reason, aside});
    }
    made_run_entries_.clear();
}

void RepositoryWatch::watch_config(const std::string& config) {
    if (!inotify_.valid()) return;
    int wd = ::inotify_add_watch(inotify_.get(), config.c_str(),
                                 IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DONT_FOLLOW);
    if (wd >= 0) config_watches_[wd] = config;
}

SandboxPolicy with_protected_since(const SandboxPolicy& policy, const RepositoryWatch* watch) {
    SandboxPolicy now = policy;
    if (watch) {
        const auto& since = watch->protected_paths();
        now.protected_paths.insert(now.protected_paths.end(), since.begin(), since.end());
    }
    return now;
}

}  // namespace caretz
