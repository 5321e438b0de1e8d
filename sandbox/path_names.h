#pragma once

#include <string>
#include <string_view>

namespace caretz {

// Names within an absolute, normalised path (no trailing slash, no "." or ".."), taken apart
// and put together as text, without asking the file system.

// "/a/b" -> "/a"; "/a" -> "/".
inline std::string parent_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}

// parent_of() without a copy: a view into `path`.
inline std::string_view parent_view(const std::string& path) {
    auto slash = path.rfind('/');
    return std::string_view(path.data(), slash == 0 ? 1 : slash);
}

// "/a/b" -> "b".
inline std::string name_of(const std::string& path) {
    return path.substr(path.rfind('/') + 1);
}

// ("/a", "b") -> "/a/b"; ("/", "b") -> "/b".
inline std::string join_path(const std::string& dir, const std::string& name) {
    return dir == "/" ? "/" + name : dir + "/" + name;
}

}  // namespace caretz
