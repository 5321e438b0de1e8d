#include "escalation/error_lines.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace caretz {

namespace {

constexpr std::string_view kSpaces = " \t";

std::string_view trim(std::string_view s) {
    const std::size_t first = s.find_first_not_of(kSpaces);
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(kSpaces) + 1 - first);
}

char lower(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Finds `phrase` from `from` on, ignoring the case of its first letter: tools print
// "Read-only file system", Go and zsh "read-only file system".
std::size_t find_phrase(std::string_view line, std::string_view phrase, std::size_t from = 0) {
    const std::string_view rest = phrase.substr(1);
    for (std::size_t pos = line.find(rest, from + 1); pos != std::string_view::npos;
         pos = line.find(rest, pos + 1)) {
        if (lower(line[pos - 1]) == lower(phrase[0])) return pos - 1;
    }
    return std::string_view::npos;
}

struct Phrase {
    std::string_view text;
    ErrorCode code;
};

// strerror()'s words, which libuv (Node) shares except for EBUSY.
constexpr std::array<Phrase, 6> kPhrases = {{
    {"Read-only file system", ErrorCode::erofs},
    {"Permission denied", ErrorCode::eacces},
    {"Operation not permitted", ErrorCode::eperm},
    {"Device or resource busy", ErrorCode::ebusy},
    {"Resource busy or locked", ErrorCode::ebusy},
    {"No such file or directory", ErrorCode::enoent},
}};

// Quotes tools put around paths: GNU 'x' and ‘x’ (and the old `x'), Python 'x' and "x", “x”.
struct QuotePair {
    std::string_view open;
    std::string_view close;
};

constexpr std::array<QuotePair, 5> kQuotes = {{
    {"'", "'"},
    {"\"", "\""},
    {"`", "'"},
    {"\xe2\x80\x98", "\xe2\x80\x99"},
    {"\xe2\x80\x9c", "\xe2\x80\x9d"},
}};

struct Quoted {
    std::size_t begin;  // the opening quote
    std::size_t end;    // just past the closing quote
    std::string_view inner;
};

// An apostrophe inside a word ("couldn't") is no quote: an opening quote follows a space or
// punctuation, and a closing one is followed by one.
bool can_open_after(std::string_view text, std::size_t pos) {
    return pos == 0 || std::string_view(" \t([{=:,").find(text[pos - 1]) != std::string_view::npos;
}

bool can_close_before(std::string_view text, std::size_t pos) {
    return pos >= text.size() ||
           std::string_view(" \t:;,.)]}").find(text[pos]) != std::string_view::npos;
}

std::optional<Quoted> quoted_at(std::string_view text, std::size_t pos) {
    for (const auto& q : kQuotes) {
        if (!text.substr(pos).starts_with(q.open) || !can_open_after(text, pos)) continue;
        const std::size_t start = pos + q.open.size();
        for (std::size_t close = text.find(q.close, start); close != std::string_view::npos;
             close = text.find(q.close, close + 1)) {
            const std::size_t end = close + q.close.size();
            if (can_close_before(text, end))
                return Quoted{pos, end, text.substr(start, close - start)};
        }
    }
    return std::nullopt;
}

std::vector<Quoted> quoted_strings(std::string_view text) {
    std::vector<Quoted> found;
    for (std::size_t pos = 0; pos < text.size();) {
        if (auto q = quoted_at(text, pos)) {
            found.push_back(*q);
            pos = q->end;
        } else {
            ++pos;
        }
    }
    return found;
}

bool inside(const std::vector<Quoted>& quoted, std::size_t pos) {
    for (const auto& q : quoted)
        if (pos >= q.begin && pos < q.end) return true;
    return false;
}

// System calls that tools name where a path would go: "ping: socket: Operation not permitted",
// "dial unix ...: connect: no such file or directory". They are never the refused path.
bool is_call_name(std::string_view word) {
    static constexpr std::array<std::string_view, 24> kCalls = {
        "socket", "connect", "bind",      "listen",  "accept", "sendto", "sendmsg", "recvmsg",
        "ioctl",  "mount",   "umount",    "unshare", "setns",  "clone",  "prctl",   "capset",
        "setuid", "setgid",  "setgroups", "chroot",  "ptrace", "open",   "write",   "read"};
    for (const auto call : kCalls)
        if (word == call) return true;
    return false;
}

bool is_url(std::string_view s) {
    return s.find("://") != std::string_view::npos;
}

bool starts_like_path(std::string_view word) {
    return word.starts_with('/') || word.starts_with('~') || word.starts_with("$HOME") ||
           word.starts_with("${HOME}");
}

// Whether the last word names what the words before it were making: git's "cannot mkdir
// newrepo" and "unable to create file README" print a bare name there, which elsewhere ("cannot
// lock ref", "ERROR") is no path.
bool follows_creation(const std::vector<std::string_view>& words) {
    const std::size_t n = words.size();
    if (n >= 2 && (words[n - 2] == "mkdir" || words[n - 2] == "create")) return true;
    if (n < 3 || words[n - 3] != "create") return false;
    for (const std::string_view kind : {"file", "directory", "dir", "folder"})
        if (words[n - 2] == kind) return true;
    return false;
}

// The path in unquoted text before an error: "/etc/x" or "/etc/my file" (bash), "open /etc/x"
// (Go), "could not lock config file .git/config" and "cannot mkdir newrepo" (git), "cannot
// create /etc/x" (dash), "of directory /var/lib/apt/lists/partial failed" (apt).
std::optional<std::string> unquoted_path(std::string_view segment) {
    segment = trim(segment);
    if (segment.empty() || is_url(segment)) return std::nullopt;
    if (starts_like_path(segment)) return std::string(segment);
    std::vector<std::string_view> words;
    for (std::size_t start = 0; start < segment.size();) {
        const std::size_t end = std::min(segment.find_first_of(kSpaces, start), segment.size());
        if (end > start) words.push_back(segment.substr(start, end - start));
        start = end + 1;
    }
    if (words.size() == 1) {
        if (is_call_name(words[0])) return std::nullopt;
        return std::string(words[0]);
    }
    for (const auto word : words)
        if (starts_like_path(word)) return std::string(word);
    if (words.back().find('/') != std::string_view::npos || follows_creation(words))
        return std::string(words.back());
    return std::nullopt;
}

// Quoted paths in text, the nearest to the end first.
std::vector<std::string> quoted_paths_from_end(const std::vector<Quoted>& quoted) {
    std::vector<std::string> paths;
    for (auto q = quoted.rbegin(); q != quoted.rend(); ++q)
        if (!q->inner.empty() && !is_url(q->inner)) paths.emplace_back(q->inner);
    return paths;
}

std::vector<std::string> paths_before(std::string_view before);

// tar says what it was doing between the path and the error:
// "tar: tool.sh: Cannot open: Read-only file system", "tar: x: Cannot create symlink to 'y': ...".
// Changing a file's owner or mode is left out: that fails for a user on the host as well.
std::optional<std::vector<std::string>> tar_paths(std::string_view before) {
    static constexpr std::array<std::string_view, 6> kActions = {
        ": Cannot open",          ": Cannot mkdir", ": Cannot create symlink to ",
        ": Cannot hard link to ", ": Cannot utime", ": Cannot stat"};
    for (const auto action : kActions) {
        const std::size_t pos = before.rfind(action);
        if (pos == std::string_view::npos) continue;
        if (action.ends_with(' ') || pos + action.size() == before.size())
            return paths_before(before.substr(0, pos));
    }
    return std::nullopt;
}

// "<where>: <path>: <error>": the path is in the last colon-separated part before the error.
std::vector<std::string> paths_before(std::string_view before) {
    if (auto tar = tar_paths(before)) return *tar;
    const std::vector<Quoted> quoted = quoted_strings(before);
    std::size_t segment_start = 0;
    for (std::size_t pos = before.rfind(": "); pos != std::string_view::npos;
         pos = pos == 0 ? std::string_view::npos : before.rfind(": ", pos - 1)) {
        if (!inside(quoted, pos)) {
            segment_start = pos + 2;
            break;
        }
    }
    std::vector<Quoted> in_segment;
    for (const auto& q : quoted)
        if (q.begin >= segment_start) in_segment.push_back(q);
    if (!in_segment.empty()) return quoted_paths_from_end(in_segment);
    auto path = unquoted_path(before.substr(segment_start));
    // A bare word opening the line names the program or a level ("ERROR: Permission denied"),
    // unless it looks like a path ("/etc/.git: Read-only file system" from git init).
    if (!path ||
        (segment_start == 0 && !starts_like_path(*path) && path->find('/') == std::string::npos))
        return {};
    return {*path};
}

// After "<error>" in Python's "...: 'P'", Node's "..., open 'P'" and zsh's "...: P".
std::vector<std::string> paths_after(std::string_view after) {
    const bool colon = after.starts_with(": ");
    const std::string_view rest = trim(after.substr(2));
    std::vector<std::string> paths;
    for (const auto& q : quoted_strings(rest))
        if (!q.inner.empty() && !is_url(q.inner)) paths.emplace_back(q.inner);
    if (paths.empty() && colon && !rest.empty() && !is_url(rest)) paths.emplace_back(rest);
    return paths;
}

bool is_digits(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_errno_number(std::string_view s) {
    return s.size() > 2 && s.front() == '(' && s.back() == ')' &&
           is_digits(s.substr(1, s.size() - 2));
}

// After an error that ends its line only a full stop, Rust's " (os error 30)" or rsync's " (30)"
// may follow; anything else, such as ssh's " (publickey)", means it is about something else.
bool ends_message(std::string_view after) {
    after = trim(after);
    return after.empty() || after == "." || after.starts_with("(os error ") ||
           is_errno_number(after);
}

// apt: "E: Could not open lock file /var/lib/apt/lists/lock - open (30: Read-only file system)".
std::vector<std::string> apt_paths(std::string_view before) {
    const std::size_t open = before.rfind('(');
    if (open == std::string_view::npos || !is_digits(before.substr(open + 1))) return {};
    const std::size_t dash = before.rfind(" - ", open);
    if (dash == std::string_view::npos) return {};
    return paths_before(before.substr(0, dash));
}

// ssh-keygen puts the error in brackets after the path:
// "Could not create directory '/home/u/.ssh' (Read-only file system)."
bool closes_bracket(std::string_view after) {
    after = trim(after);
    return after == ")" || after == ").";
}

std::vector<std::string> paths_around(std::string_view line, std::size_t pos, std::size_t len) {
    const std::string_view before = line.substr(0, pos);
    const std::string_view after = line.substr(pos + len);
    if (after.starts_with(": ") || after.starts_with(", ")) return paths_after(after);
    if (before.ends_with(" (") && closes_bracket(after))
        return paths_before(before.substr(0, before.size() - 2));
    if (!before.ends_with(": ")) return {};
    const std::string_view where = before.substr(0, before.size() - 2);
    if (trim(after) == ")") return apt_paths(where);
    if (ends_message(after)) return paths_before(where);
    return {};
}

// dash: "sh: 1: cd: can't cd to /x"; fish: "cd: The directory '/x' does not exist".
std::optional<PathError> parse_missing_directory(std::string_view line) {
    constexpr std::string_view kDash = "can't cd to ";
    if (const std::size_t pos = line.find(kDash); pos != std::string_view::npos) {
        const std::string_view path = trim(line.substr(pos + kDash.size()));
        if (!path.empty()) return PathError{ErrorCode::enoent, {std::string(path)}};
    }
    constexpr std::string_view kFish = "The directory ";
    const std::size_t pos = line.find(kFish);
    if (pos == std::string_view::npos || !line.ends_with(" does not exist")) return std::nullopt;
    const auto quoted = quoted_at(line, pos + kFish.size());
    if (!quoted || quoted->inner.empty()) return std::nullopt;
    return PathError{ErrorCode::enoent, {std::string(quoted->inner)}};
}

// fish puts the path on the line before the error:
//   warning: An error occurred while redirecting file '/etc/x'
//   open: Read-only file system
std::optional<PathError> parse_fish_redirect(std::string_view line, std::string_view previous) {
    constexpr std::string_view kRedirect = "An error occurred while redirecting file ";
    line = trim(line);
    if (!line.starts_with("open: ")) return std::nullopt;
    const std::size_t pos = previous.find(kRedirect);
    if (pos == std::string_view::npos) return std::nullopt;
    const auto quoted = quoted_at(previous, pos + kRedirect.size());
    if (!quoted || quoted->inner.empty()) return std::nullopt;
    for (const auto& phrase : kPhrases) {
        if (find_phrase(line, phrase.text) == 6 &&
            ends_message(line.substr(6 + phrase.text.size())))
            return PathError{phrase.code, {std::string(quoted->inner)}};
    }
    return std::nullopt;
}

std::optional<std::string> unix_socket_address(std::string_view address) {
    address = address.substr(0, address.find_first_of(" \t;"));
    while (!address.empty() &&
           std::string_view(".:,").find(address.back()) != std::string_view::npos)
        address.remove_suffix(1);
    constexpr std::string_view kUnix = "unix://";
    if (!address.starts_with(kUnix)) return std::nullopt;  // tcp://, ssh://: the network's
    return std::string(address.substr(kUnix.size()));
}

std::string_view word_at(std::string_view line, std::size_t pos) {
    const std::string_view rest = line.substr(pos);
    return rest.substr(0, rest.find_first_of(" \t:;,"));
}

constexpr std::string_view kSocketFailure = "Failed to connect to socket ";

bool contains(std::string_view line, std::string_view text) {
    return line.find(text) != std::string_view::npos;
}

// The socket a D-Bus error names: libdbus's "Failed to connect to socket P: ..." or an address
// "unix:path=P"; "" when it names none.
std::string named_socket(std::string_view line) {
    for (const std::string_view marker : {kSocketFailure, std::string_view("unix:path=")}) {
        if (const std::size_t pos = line.find(marker); pos != std::string_view::npos)
            return std::string(word_at(line, pos + marker.size()));
    }
    return {};
}

// What tools print when they were making the path: coreutils (cp, install, mkdir, dash), git,
// gpg, tar, rsync, ssh-keygen and Node.
bool says_creating(std::string_view line) {
    static constexpr std::array<std::string_view, 10> kCreating = {
        "cannot create ",    "could not create ", "can't create ", "unable to create ",
        "failed to create ", "cannot mkdir",      "mkdir \"",      "mkstemp \"",
        "Saving key \"",     ", mkdir '"};
    for (const auto phrase : kCreating)
        if (find_phrase(line, phrase) != std::string_view::npos) return true;
    return false;
}

}  // namespace

std::optional<PathError> parse_path_error(std::string_view line, std::string_view previous) {
    if (auto fish = parse_fish_redirect(line, previous)) return fish;
    if (auto missing = parse_missing_directory(line)) return missing;
    for (const auto& phrase : kPhrases) {
        for (std::size_t pos = find_phrase(line, phrase.text); pos != std::string_view::npos;
             pos = find_phrase(line, phrase.text, pos + 1)) {
            auto paths = paths_around(line, pos, phrase.text.size());
            if (!paths.empty())
                return PathError{phrase.code, std::move(paths), says_creating(line)};
        }
    }
    return std::nullopt;
}

std::vector<std::string> quoted_paths(std::string_view line) {
    std::vector<std::string> paths;
    // cargo quotes with a backtick on both sides, which kQuotes (GNU's `x') does not pair.
    for (std::size_t open = line.find('`'); open != std::string_view::npos;) {
        const std::size_t close = line.find('`', open + 1);
        if (close == std::string_view::npos) break;
        const std::string_view inner = line.substr(open + 1, close - open - 1);
        if (starts_like_path(inner)) paths.emplace_back(inner);
        open = line.find('`', close + 1);
    }
    for (const auto& q : quoted_strings(line))
        if (starts_like_path(q.inner) && !is_url(q.inner)) paths.emplace_back(q.inner);
    return paths;
}

std::optional<PathError> parse_pathless_error(std::string_view line) {
    // Tools' own words for a write that failed, with the path in quotes or nowhere.
    static constexpr std::array<std::string_view, 3> kOwnWords = {
        "Failure writing output to destination",  // curl -o
        "unable to open database",                // sqlite3
        "attempt to write a readonly database",   // sqlite3 on a read-only file
    };
    for (const auto words : kOwnWords)
        if (contains(line, words)) return PathError{ErrorCode::eacces, quoted_paths(line), false};
    std::string_view text = trim(line);
    for (const std::string_view prefix : {"Caused by:", "caused by:", "Error:", "error:"})
        if (text.starts_with(prefix)) text = trim(text.substr(prefix.size()));
    for (const auto& phrase : kPhrases) {
        if (!text.starts_with(phrase.text)) continue;
        const std::string_view rest = text.substr(phrase.text.size());
        // Rust's " (os error 30)", perl's " at -e line 1.", or nothing.
        if (rest.empty() || rest == "." || rest.starts_with(" (os error ") ||
            rest.starts_with(" at "))
            return PathError{phrase.code, {}, false};
    }
    return std::nullopt;
}

std::optional<std::string> parse_docker_unreachable(std::string_view line) {
    for (const std::string_view marker :
         {"Cannot connect to the Docker daemon at ", "failed to connect to the docker API at ",
          "while trying to connect to the Docker daemon socket at "}) {
        if (const std::size_t pos = line.find(marker); pos != std::string_view::npos)
            return unix_socket_address(line.substr(pos + marker.size()));
    }
    // docker-compose 1.x and the Python SDK name no socket.
    if (contains(line, "Error while fetching server API version: ('Connection aborted.'") ||
        contains(line, "Couldn't connect to Docker daemon at http+docker://localunixsocket"))
        return std::string();
    constexpr std::string_view kDial = "dial unix ";
    if (const std::size_t pos = line.find(kDial); pos != std::string_view::npos) {
        const std::string_view socket = word_at(line, pos + kDial.size());
        if (socket.ends_with("/docker.sock") || socket.ends_with("/podman.sock"))
            return std::string(socket);
    }
    return std::nullopt;
}

std::optional<UnreachableBus> parse_bus_unreachable(std::string_view line) {
    using Which = UnreachableBus::Which;
    const std::string socket = named_socket(line);
    // systemd's "user scope bus" and "No medium found" (no $XDG_RUNTIME_DIR), gdbus's and
    // dconf's autolaunch complaints, dbus-send's "session" message bus.
    for (const std::string_view marker :
         {"user scope bus", "No medium found", "\"session\" message bus",
          "DBUS_SESSION_BUS_ADDRESS", "Cannot autolaunch D-Bus"}) {
        if (contains(line, marker)) return UnreachableBus{Which::session, socket};
    }
    if (contains(line, kSocketFailure))
        return socket.ends_with("/system_bus_socket")
                   ? std::optional(UnreachableBus{Which::system, socket})
               : socket.ends_with("/bus") ? std::optional(UnreachableBus{Which::session, socket})
                                          : std::nullopt;
    for (const std::string_view marker :
         {"Failed to connect to system scope bus", "Could not create NMClient object: ",
          "Failed to open connection to \"system\" message bus"}) {
        if (contains(line, marker)) return UnreachableBus{Which::system, socket};
    }
    for (const std::string_view marker :
         {"Failed to connect to bus: ", "Failed to create bus connection: ",
          "Failed to get D-Bus connection: ", "Error connecting: Could not connect: "}) {
        if (contains(line, marker)) return UnreachableBus{Which::either, socket};
    }
    return std::nullopt;
}

SudoEvidence parse_sudo_refusal(std::string_view line) {
    line = trim(line);
    if (!line.starts_with("sudo: ")) return SudoEvidence::none;
    if (contains(line, "\"no new privileges\" flag is set") ||
        contains(line, "effective uid is not 0") ||
        contains(line, "must be owned by uid 0 and have the setuid bit set"))
        return SudoEvidence::cannot_become_root;
    if (contains(line, " is owned by uid ") && contains(line, ", should be 0"))
        return SudoEvidence::foreign_owner;
    return SudoEvidence::none;
}

}  // namespace caretz
