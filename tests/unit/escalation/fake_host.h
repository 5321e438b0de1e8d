#pragma once

#include <string>
#include <vector>

#include "escalation/host_probe.h"
#include "sandbox/policy.h"

namespace caretz::testing {

// A host described by lists: paths that exist (their parent directories too), sockets, and
// paths the user may write (with everything below them).
class FakeHost : public HostProbe {
public:
    std::vector<std::string> paths;
    std::vector<std::string> sockets;
    std::vector<std::string> writable;

    bool exists(const std::string& path) const override {
        for (const auto* list : {&paths, &sockets})
            for (const auto& p : *list)
                if (path_within(p, path)) return true;
        return false;
    }

    bool is_socket(const std::string& path) const override {
        for (const auto& s : sockets)
            if (s == path) return true;
        return false;
    }

    bool may_write(const std::string& path) const override {
        for (const auto& w : writable)
            if (path_within(path, w)) return true;
        return false;
    }
};

// Caretz's default policy for the user the cases were captured as.
inline SandboxPolicy test_policy(const std::vector<std::string>& extra_writable = {},
                                 const std::string& docker_host = "") {
    PolicySettings settings;
    settings.writable = extra_writable;
    Environment env;
    if (!docker_host.empty()) env["DOCKER_HOST"] = docker_host;
    return make_policy(settings, "/home/cztest", "/home/cztest/work", env);
}

}  // namespace caretz::testing
