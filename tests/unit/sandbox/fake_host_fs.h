#pragma once

#include <map>

#include "sandbox/host_fs.h"

namespace caretz {

// A host described by a table of paths: "d" directory, "f" file ("f:TEXT" with its text), "s"
// socket, "l:TARGET" link.
class FakeHostFs : public HostFs {
public:
    explicit FakeHostFs(std::map<std::string, std::string> paths) : paths_(std::move(paths)) {}

    Type type(const std::string& path) const override {
        if (path == "/") return Type::directory;
        auto it = paths_.find(path);
        if (it == paths_.end()) return Type::missing;
        switch (it->second[0]) {
            case 'd':
                return Type::directory;
            case 'f':
                return Type::file;
            case 's':
                return Type::socket;
            case 'l':
                return Type::symlink;
        }
        return Type::other;
    }
    std::vector<Entry> list(const std::string& dir) const override {
        std::vector<Entry> out;
        const std::string prefix = dir == "/" ? "/" : dir + "/";
        for (const auto& [path, _] : paths_)
            if (path.starts_with(prefix) && path.find('/', prefix.size()) == std::string::npos)
                out.push_back({path.substr(prefix.size()), type(path)});
        return out;
    }
    std::string read_link(const std::string& path) const override {
        return paths_.at(path).substr(2);
    }
    std::optional<std::string> real_path(const std::string& path) const override {
        if (type(path) == Type::missing) return std::nullopt;
        if (type(path) == Type::symlink) {
            std::string target = read_link(path);
            return target[0] == '/' ? target : "/" + target;
        }
        return path;
    }
    std::string read_start(const std::string& path, size_t max) const override {
        auto it = paths_.find(path);
        if (it == paths_.end() || !it->second.starts_with("f:")) return "";
        return it->second.substr(2, max);
    }

private:
    std::map<std::string, std::string> paths_;
};

}  // namespace caretz
