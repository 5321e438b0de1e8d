#include "escalation/refusal_detector.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "escalation/credential_fallbacks.h"
#include "escalation/error_lines.h"
#include "escalation/output_lines.h"
#include "escalation/shell_command.h"
#include "sandbox/path_names.h"

namespace caretz {

namespace {

constexpr std::size_t kMaxEvidenceBytes = 300;
constexpr std::string_view kDefaultDockerSocket = "/var/run/docker.sock";
// Runs of sudo named one by one; a loop's further runs are counted on the last.
constexpr std::size_t kMaxSudoRefusals = 8;

// Words that every evidence line contains. Each is cut to start at a letter that is rare in
// ordinary output, so that find(), which looks for the first letter, stops less often; that also
// makes "Permission denied" and Go's "permission denied" match alike.
constexpr std::array<std::string_view, 15> kEvidenceWords = {
    "-only file",         // Read-only file system (EROFS)
    "mission denied",     // Permission denied (EACCES)
    "permitted",          // Operation not permitted (EPERM)
    "bus",                // Device or resource busy (EBUSY); the system bus
    "file or directory",  // No such file or directory (ENOENT)
    "cd to",              // dash: can't cd to
    "does not exist",     // fish: The directory '...' does not exist
    "redirecting",        // fish: An error occurred while redirecting file '...'
    "ocker",              // the Docker daemon
    "connect",            // gdbus and NetworkManager: Could not connect
    "API version",        // docker-compose 1.x
    "ailed to",           // a chained error's first line: cargo's "failed to create directory"
    "nable to",           // sqlite3: unable to open database
    "ailure writing",     // curl: Failure writing output to destination
    "readonly database",  // sqlite3: attempt to write a readonly database
};

// Cheap enough for every line of output: every evidence line has a colon, or the error in
// brackets (ssh-keygen's "Could not create directory '/x' (Read-only file system)."), which
// memchr finds fast, so most lines without either are skipped before any word search.
bool may_be_evidence(std::string_view line) {
    if (line.empty()) return false;
    // perl's die "$!\n" prints the errno's words alone.
    if (std::memchr(line.data(), ':', line.size()) == nullptr &&
        std::memchr(line.data(), '(', line.size()) == nullptr)
        return parse_pathless_error(line).has_value();
    const std::size_t text = line.find_first_not_of(" \t");
    if (text != std::string_view::npos && line.substr(text).starts_with("sudo: ")) return true;
    for (const auto word : kEvidenceWords)
        if (line.find(word) != std::string_view::npos) return true;
    for (const auto& fallback : credential_fallbacks())
        if (line.find(fallback.line) != std::string_view::npos) return true;
    return false;
}

std::string evidence_text(std::string_view line) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    line = line.substr(first, line.find_last_not_of(" \t") + 1 - first);
    if (line.size() > kMaxEvidenceBytes) {
        std::size_t cut = kMaxEvidenceBytes;
        while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
        line = line.substr(0, cut);
    }
    return std::string(line);
}

// Applies the rules line by line and collects refusals in order of first appearance, each kind
// and subject once.
class RefusalCollector {
public:
    explicit RefusalCollector(const DetectionContext& ctx)
        : ctx_(ctx),
          failed_(ctx.exit_code != 0),
          sudo_runs_(runs_of("sudo")),
          sudo_ran_(ctx.program_runs ? !sudo_runs_.empty() : runs_sudo(ctx.command)),
          cwd_(absolute_path(ctx.cwd.empty() ? ctx.policy.workspace : ctx.cwd, "/",
                             ctx.policy.home)) {}

    // `number` is the line's in the output: a chained error's errno comes a few lines below
    // the line that names the path.
    void line(std::string_view text, std::string_view previous, std::uint64_t number) {
        if (docker_line(text) || bus_line(text) || sudo_line(text)) return;
        if (!failed_ || fallback_line(text)) return;
        if (!path_line(text, previous)) pathless_line(text, number);
        if (auto paths = quoted_paths(text); !paths.empty()) named_above_ = {number, paths};
    }

    std::vector<Refusal> take() { return std::move(refusals_); }

private:
    // Docker and the system bus count whatever the exit status: `docker images | head` exits 0.
    bool docker_line(std::string_view text) {
        const auto socket = parse_docker_unreachable(text);
        if (!socket) return false;
        const std::string path = socket->empty() ? fallback_docker_socket() : *socket;
        if (!ctx_.policy.allow_docker && !path.empty() && ctx_.host.is_socket(path))
            add(RefusalKind::docker, path, text);
        return true;
    }

    std::string fallback_docker_socket() const {
        if (ctx_.docker_host.empty()) {
            // Rootless Docker and Podman keep their sockets in the user's runtime folder.
            const std::string runtime = variable_in(ctx_.env, "XDG_RUNTIME_DIR");
            if (!ctx_.host.is_socket(std::string(kDefaultDockerSocket)) && runtime.starts_with('/'))
                for (const char* rootless : {"/docker.sock", "/podman/podman.sock"})
                    if (ctx_.host.is_socket(runtime + rootless)) return runtime + rootless;
            return std::string(kDefaultDockerSocket);
        }
        constexpr std::string_view kUnix = "unix://";
        if (ctx_.docker_host.starts_with(kUnix)) return ctx_.docker_host.substr(kUnix.size());
        return {};  // a daemon over the network is no socket of the host's
    }

    // The offer says which bus: the user's session bus is where `systemctl --user` (and
    // `brew services` on Linux) reach the user's own services.
    bool bus_line(std::string_view text) {
        using Which = UnreachableBus::Which;
        const auto bus = parse_bus_unreachable(text);
        if (!bus) return false;
        const bool session = bus->which == Which::session ||
                             (bus->which == Which::either && uses_session_bus(ctx_.command));
        const std::string path = !bus->socket.empty() ? bus->socket
                                 : session            ? session_bus_socket(ctx_.env)
                                                      : ctx_.system_bus_socket;
        if (!path.empty() && ctx_.host.is_socket(path))
            add(RefusalKind::bus, path, text, session ? "your session bus" : "the system bus");
        return true;
    }

    // sudo's refusal lines count only when the command ran sudo: a grep through logs that
    // prints them does not, nor does a command that prints them without running sudo. Which
    // sudo ran is known from the stand-in's records, so a script's sudo counts too; where the
    // sandbox could not watch sudo, the command text says whether it runs sudo itself. The
    // clearest line becomes the evidence, as the first one sudo prints in a user namespace
    // ("/etc/sudo.conf is owned by uid 65534") explains little.
    bool sudo_line(std::string_view text) {
        const SudoEvidence evidence = parse_sudo_refusal(text);
        if (evidence == SudoEvidence::none) return false;
        if (!sudo_ran_) return true;
        if (!sudo_first_) {
            sudo_first_ = refusals_.size();
            add_sudo_runs(text);
        } else if (evidence > sudo_evidence_) {
            for (std::size_t i = *sudo_first_; i < refusals_.size(); ++i)
                if (refusals_[i].kind == RefusalKind::sudo)
                    refusals_[i].evidence = evidence_text(text);
        }
        sudo_evidence_ = std::max(sudo_evidence_, evidence);
        return true;
    }

    // One refusal per run of sudo, in the order they ran: a script that runs the same sudo
    // twice shows both, so the user sees what the command attempted.
    void add_sudo_runs(std::string_view text) {
        if (!ctx_.program_runs) {
            add(RefusalKind::sudo, "sudo", text);
            return;
        }
        const auto& runs = sudo_runs_;
        const std::size_t named = std::min(runs.size(), kMaxSudoRefusals);
        for (std::size_t i = 0; i < named; ++i) {
            std::string origin = "run by the command in " + runs[i]->cwd;
            if (i + 1 == named && runs.size() > named)
                origin +=
                    "; " + std::to_string(runs.size() - named) + " more runs of sudo not shown";
            refusals_.push_back(
                {RefusalKind::sudo, run_command_line(*runs[i]), evidence_text(text), origin});
        }
    }

    std::vector<const ProgramRun*> runs_of(std::string_view program) const {
        std::vector<const ProgramRun*> runs;
        if (ctx_.program_runs)
            for (const auto& run : *ctx_.program_runs)
                if (run.program == program) runs.push_back(&run);
        return runs;
    }

    // A tool that went on without its hidden credential store prints no ENOENT: its own
    // fallback line counts, only when the tool really ran (its record, never the command text,
    // which a script or an alias hides and an echo fakes) and the store is there on the host.
    bool fallback_line(std::string_view text) {
        bool found = false;
        for (const auto& fallback : credential_fallbacks()) {
            if (text.find(fallback.line) == std::string_view::npos ||
                runs_of(fallback.program).empty())
                continue;
            for (const auto& store : fallback.stores) {
                for (const auto& path :
                     location_paths(store, ctx_.policy.home, ctx_.policy.workspace, ctx_.env)) {
                    if (!ctx_.policy.is_hidden(path) || !ctx_.host.exists(path)) continue;
                    add(RefusalKind::hidden, path, text);
                    found = true;
                }
            }
        }
        return found;
    }

    // Paths count only when the command failed, so a search that prints refusal text and
    // succeeds keeps its result. False when the line reports no path error.
    bool path_line(std::string_view text, std::string_view previous) {
        const auto error = parse_path_error(text, previous);
        if (!error) return false;
        bool sandbox_refuses = false;
        for (const auto& printed : error->paths) {
            const std::string path = resolve(printed);
            if (refused(*error, path)) {
                add_path_refusal(*error, path, text);
                return true;
            }
            sandbox_refuses = sandbox_refuses || !ctx_.policy.can_write(path);
        }
        // EROFS cannot come from a place the sandbox may write: a relative path that resolves
        // into one was printed by a program that works elsewhere (`tar -C DIR`, `make -C DIR`,
        // a `cd`). Only when no path of the line is refused as it reads (npm's symlink from the
        // workspace into /usr, which the host refuses too, is explained by /usr).
        if (error->code != ErrorCode::erofs || sandbox_refuses) return true;
        for (const auto& printed : error->paths) {
            if (!is_relative(printed) || !ctx_.policy.can_write(resolve(printed))) continue;
            const std::string where = where_relative_points(printed);
            // Where the command does not say, the host cannot be asked either.
            if (is_relative(where) || ctx_.host.may_write(where))
                add(RefusalKind::write, where, text);
            return true;
        }
        return true;
    }

    // An error without the path beside its errno: the path is the one the line quotes, else
    // the one a line just above names (a chained error), else the one path of the command
    // line that the sandbox refuses; several such paths leave it unknown, and unasked.
    void pathless_line(std::string_view text, std::uint64_t number) {
        auto error = parse_pathless_error(text);
        if (!error) return;
        if (error->paths.empty() && named_above_ && number - named_above_->first <= kChainLines)
            error->paths = named_above_->second;
        std::vector<std::string> candidates;
        for (const auto& printed : error->paths) candidates.push_back(resolve(printed));
        if (error->paths.empty())
            for (const auto& printed : named_paths(ctx_.command))
                candidates.push_back(resolve(printed));
        std::optional<std::string> subject;
        for (const auto& path : candidates) {
            if (!refused(*error, path) || path == subject) continue;
            if (subject && error->paths.empty()) return;  // the command names two
            if (!subject) subject = path;
        }
        if (subject) add_path_refusal(*error, *subject, text);
    }

    bool refused(const PathError& error, const std::string& path) const {
        if (error.code == ErrorCode::enoent)
            return hidden_by_sandbox(path) || (error.creating && made_in_hidden(path));
        return write_refused(path);
    }

    // A refused write to a hidden path (gpg making its home or its lock there, ssh-keygen its
    // folder) is one refusal of the hidden path itself, whatever the tool tried there.
    void add_path_refusal(const PathError& error, std::string path, std::string_view text) {
        if (error.code != ErrorCode::enoent) {
            if (!ctx_.policy.is_hidden(path)) {
                add(RefusalKind::write, path, text);
                return;
            }
            for (const auto& h : ctx_.policy.hidden)
                if (path_within(path, h) && h.size() < path.size()) path = h;
        }
        for (const auto& r : refusals_)
            if (r.kind == RefusalKind::hidden &&
                (path_within(path, r.subject) || path_within(r.subject, path)))
                return;
        add(RefusalKind::hidden, path, text);
    }

    static bool is_relative(const std::string& printed) {
        return !printed.starts_with('/') && !printed.starts_with('~') &&
               !printed.starts_with("$HOME") && !printed.starts_with("${HOME}");
    }

    // The one path, among those the printed one means in the folders where the command line's
    // programs run (after its `cd`s, or in their `-C` folder), that the sandbox may not write;
    // when there is no such path, or more than one, the path as printed, since an absolute path
    // the command may never have touched would mislead.
    std::string where_relative_points(const std::string& printed) const {
        std::string base = cwd_;
        std::optional<std::string> found;
        for (const auto& program : directory_arguments(ctx_.command)) {
            const std::string dir = program.dir.empty() ? base : resolve_from(program.dir, base);
            if (program.changes_cwd) {
                base = dir;
                continue;
            }
            const std::string candidate = absolute_path(printed, dir, ctx_.policy.home);
            if (ctx_.policy.can_write(candidate) || candidate == found) continue;
            if (found) return printed;
            found = candidate;
        }
        return found.value_or(printed);
    }

    // Whatever the error (EROFS from the read-only mounts, EBUSY from a protected file's bind,
    // or EACCES and EPERM from the host's own permissions, which the sandbox keeps), a rerun
    // outside helps only where the host would let the user write: `npm install -g` into /usr
    // fails there too.
    bool write_refused(const std::string& path) const {
        return !ctx_.policy.can_write(path) && ctx_.host.may_write(path);
    }

    // Missing inside but there on the host. A path missing on the host too may be one the
    // command was about to create in a hidden directory, but a read of a file that never
    // existed reads the same, and asking then would be a false prompt.
    bool hidden_by_sandbox(const std::string& path) const { return ctx_.host.exists(path); }

    // A path the tool was making in a hidden folder (`ssh-keygen -f ~/.ssh/new_key`): ENOENT says
    // the folder to hold it was missing, and it is missing only inside when it exists on the
    // host. A rerun outside makes it only where the host lets the user write.
    bool made_in_hidden(const std::string& path) const {
        return ctx_.policy.is_hidden(path) && ctx_.host.exists(parent_of(path)) &&
               ctx_.host.may_write(path);
    }

    std::string resolve(const std::string& printed) const { return resolve_from(printed, cwd_); }

    std::string resolve_from(const std::string& printed, const std::string& base) const {
        for (const std::string_view home : {"${HOME}", "$HOME"}) {
            if (printed.starts_with(home) &&
                (printed.size() == home.size() || printed[home.size()] == '/'))
                return absolute_path(ctx_.policy.home + printed.substr(home.size()), base,
                                     ctx_.policy.home);
        }
        return absolute_path(printed, base, ctx_.policy.home);
    }

    void add(RefusalKind kind, const std::string& subject, std::string_view text,
             std::string origin = {}) {
        for (const auto& r : refusals_)
            if (r.kind == kind && r.subject == subject) return;
        refusals_.push_back({kind, subject, evidence_text(text), std::move(origin)});
    }

    // How far below the line that names the path a chained errno may come (cargo: the path,
    // an empty line, "Caused by:", the errno).
    static constexpr std::uint64_t kChainLines = 4;
    // The last line that named paths in quotes, and its number.
    std::optional<std::pair<std::uint64_t, std::vector<std::string>>> named_above_;
    const DetectionContext& ctx_;
    const bool failed_;
    const std::vector<const ProgramRun*> sudo_runs_;
    const bool sudo_ran_;
    const std::string cwd_;
    std::vector<Refusal> refusals_;
    std::optional<std::size_t> sudo_first_;  // where the sudo refusals start
    SudoEvidence sudo_evidence_ = SudoEvidence::none;
};

}  // namespace

void RefusalDetector::observe_line(std::string_view line) {
    const std::uint64_t number = lines_seen_++;
    if (may_be_evidence(line)) keep(number, line.substr(0, kMaxLineBytes));
}

void RefusalDetector::keep(std::uint64_t number, std::string_view line) {
    if (head_.size() < kHeadLines) {
        head_.push_back({number, std::string(line)});
    } else if (tail_.size() < kTailLines) {
        tail_.push_back({number, std::string(line)});
    } else {
        Candidate& oldest = tail_[tail_next_];
        oldest.number = number;
        oldest.text.assign(line);
        tail_next_ = (tail_next_ + 1) % kTailLines;
    }
}

std::size_t RefusalDetector::stored_bytes() const {
    std::size_t bytes = 0;
    for (const auto& c : head_) bytes += c.text.size();
    for (const auto& c : tail_) bytes += c.text.size();
    return bytes;
}

std::vector<const RefusalDetector::Candidate*> RefusalDetector::in_order() const {
    std::vector<const Candidate*> lines;
    lines.reserve(stored_lines());
    for (const auto& c : head_) lines.push_back(&c);
    for (std::size_t i = 0; i < tail_.size(); ++i)
        lines.push_back(&tail_[(tail_next_ + i) % tail_.size()]);
    return lines;
}

std::vector<Refusal> RefusalDetector::finish(const DetectionContext& ctx) const {
    RefusalCollector collector(ctx);
    const Candidate* previous = nullptr;
    for (const Candidate* c : in_order()) {
        const bool adjacent = previous && previous->number + 1 == c->number;
        collector.line(c->text, adjacent ? std::string_view(previous->text) : std::string_view(),
                       c->number);
        previous = c;
    }
    return collector.take();
}

std::vector<Refusal> detect_refusals(const DetectionContext& ctx, std::string_view output) {
    RefusalDetector detector;
    OutputLines lines([&detector](std::string_view line) { detector.observe_line(line); });
    lines.feed(output);
    lines.finish();
    return detector.finish(ctx);
}

std::string session_bus_socket(const Environment& env) {
    const std::string address = variable_in(env, "DBUS_SESSION_BUS_ADDRESS");
    constexpr std::string_view kPath = "unix:path=";
    if (const auto at = address.find(kPath); at != std::string::npos) {
        const auto start = at + kPath.size();
        return address.substr(start, address.find_first_of(",;", start) - start);
    }
    const std::string runtime = variable_in(env, "XDG_RUNTIME_DIR");
    return runtime.starts_with('/') ? runtime + "/bus" : "";
}

}  // namespace caretz
