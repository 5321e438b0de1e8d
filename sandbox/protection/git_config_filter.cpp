#include "sandbox/protection/git_config_filter.h"

#include <algorithm>
#include <array>
#include <utility>

#include "sandbox/spawn.h"

namespace caretz {

namespace {

struct KeyParts {
    std::string section;
    std::optional<std::string> subsection;
    std::string name;
};

// "remote.origin.url" -> remote, origin, url; the subsection may hold dots itself.
std::optional<KeyParts> split_key(const std::string& key) {
    auto first = key.find('.');
    auto last = key.rfind('.');
    if (first == std::string::npos || first == 0 || last + 1 == key.size()) return std::nullopt;
    KeyParts parts{key.substr(0, first), std::nullopt, key.substr(last + 1)};
    if (last != first) parts.subsection = key.substr(first + 1, last - first - 1);
    return parts;
}

// A value in double quotes: git reads \n and \t there as a newline and a tab.
std::string git_quoted(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else {
            out += c;
        }
    }
    return out + '"';
}

// A subsection name in double quotes. Git drops the backslash before any character but `\` and
// `"` there, so \t would read as `t`: everything else is written as it is. A key from `git
// config --list --null` cannot hold a newline, which a subsection cannot either.
std::string git_quoted_subsection(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '\\' || c == '"') out += '\\';
        out += c;
    }
    return out + '"';
}

}  // namespace

std::optional<std::vector<GitConfigEntry>> parse_git_config_list(std::string_view output) {
    std::vector<GitConfigEntry> entries;
    while (!output.empty()) {
        auto end = output.find('\0');
        if (end == std::string_view::npos) return std::nullopt;
        std::string_view item = output.substr(0, end);
        output.remove_prefix(end + 1);
        auto newline = item.find('\n');
        GitConfigEntry entry{std::string(item.substr(0, newline)), std::nullopt};
        if (newline != std::string_view::npos) entry.value = std::string(item.substr(newline + 1));
        if (!split_key(entry.key)) return std::nullopt;
        entries.push_back(std::move(entry));
    }
    return entries;
}

bool kept_from_sandbox(const std::string& key) {
    auto parts = split_key(key);
    if (!parts) return false;
    const std::string& s = parts->section;
    const std::string& n = parts->name;
    auto any_of = [&](std::initializer_list<const char*> names) {
        return std::any_of(names.begin(), names.end(), [&](const char* x) { return n == x; });
    };
    if (!parts->subsection) {
        if (s == "core")
            return any_of({"repositoryformatversion", "filemode", "bare", "logallrefupdates",
                           "ignorecase", "precomposeunicode", "symlinks", "worktree",
                           "sparsecheckout", "sparsecheckoutcone"});
        if (s == "extensions")
            return any_of({"objectformat", "worktreeconfig", "partialclone", "refstorage"});
        return false;
    }
    if (s == "remote")
        return any_of({"url", "pushurl", "fetch", "push", "tagopt", "mirror", "prune", "promisor",
                       "partialclonefilter"});
    if (s == "branch") return any_of({"remote", "merge", "rebase", "pushremote"});
    if (s == "submodule") return any_of({"url", "active"});
    return false;
}

std::string git_config_text(const std::vector<GitConfigEntry>& entries) {
    std::string text;
    std::optional<std::pair<std::string, std::optional<std::string>>> current;
    for (const auto& entry : entries) {
        auto parts = split_key(entry.key);
        if (!parts) continue;
        std::pair<std::string, std::optional<std::string>> section{parts->section,
                                                                   parts->subsection};
        if (current != section) {
            text += "[" + parts->section;
            if (parts->subsection) text += " " + git_quoted_subsection(*parts->subsection);
            text += "]\n";
            current = section;
        }
        text += "\t" + parts->name;
        if (entry.value) text += " = " + git_quoted(*entry.value);
        text += "\n";
    }
    return text;
}

std::optional<std::vector<GitConfigEntry>> read_git_config(const std::string& path) {
    SpawnOptions options;
    options.env = Environment{{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                              {"HOME", "/nonexistent"},
                              {"GIT_CONFIG_NOSYSTEM", "1"},
                              {"GIT_CONFIG_GLOBAL", "/dev/null"},
                              {"GIT_CEILING_DIRECTORIES", "/"},
                              {"LC_ALL", "C"}};
    options.cwd = {"/"};
    options.search_path = true;
    auto text =
        output_of({"git", "config", "--file", path, "--no-includes", "--list", "--null"}, options);
    if (!text) return std::nullopt;
    return parse_git_config_list(*text);
}

}  // namespace caretz
