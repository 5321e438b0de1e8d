#include "agent/instructions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "pty/unique_fd.h"

namespace caretz {

namespace {

namespace fs = std::filesystem;

// A work tree's top: `.git` is a repository (it has HEAD) or a file naming one (a linked
// worktree, a submodule). An empty `.git` folder is no repository.
bool work_tree_top(const fs::path& dir) {
    std::error_code error;
    const fs::path git = dir / ".git";
    if (fs::is_directory(git, error)) return fs::exists(git / "HEAD", error);
    return fs::is_regular_file(git, error);
}

// The folders from the repository's top down to `cwd`; just `cwd` outside a repository.
std::vector<fs::path> workspace_folders(const fs::path& cwd) {
    std::vector<fs::path> up;
    for (fs::path dir = cwd;; dir = dir.parent_path()) {
        up.push_back(dir);
        if (work_tree_top(dir)) return {up.rbegin(), up.rend()};
        if (dir == dir.parent_path()) break;
    }
    return {cwd};
}

// Up to `room` bytes of a regular file, and its size; nullopt when it is not one or unreadable.
std::optional<std::pair<std::string, size_t>> read_regular(const fs::path& path, size_t room) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    std::string text(std::min(room, static_cast<size_t>(st.st_size)), '\0');
    size_t got = 0;
    while (got < text.size()) {
        ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    text.resize(got);
    return std::make_pair(std::move(text), static_cast<size_t>(st.st_size));
}

}  // namespace

Instructions load_instructions(const std::string& machine_dir, const std::string& user_dir,
                               const std::string& cwd, size_t limit) {
    std::vector<fs::path> paths = {fs::path(machine_dir) / "AGENTS.md",
                                   fs::path(user_dir) / "AGENTS.md"};
    for (const auto& dir : workspace_folders(fs::path(cwd))) paths.push_back(dir / "AGENTS.md");
    Instructions out;
    size_t room = limit;
    for (const auto& path : paths) {
        // The same file twice (the workspace is the user's config folder) is read once.
        bool seen = false;
        for (const auto& f : out.files) seen = seen || f.path == path.string();
        if (seen) continue;
        auto file = read_regular(path, room);
        if (!file) continue;
        const auto& [text, size] = *file;
        out.files.push_back({path.string(), size, text.size()});
        out.text += "--- " + path.string() + " ---\n" + text;
        if (!text.empty() && text.back() != '\n') out.text += '\n';
        if (text.size() < size)
            out.text += "[Caretz: cut here; the instruction files reach the model up to " +
                        std::to_string(limit) + " bytes in all, and this one has " +
                        std::to_string(size) + "]\n";
        room -= text.size();
    }
    return out;
}

}  // namespace caretz
