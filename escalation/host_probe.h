#pragma once

#include <string>

namespace caretz {

// The questions refusal detection asks about the host, outside the sandbox. Detection takes
// this interface so tests can describe a host without touching the real one.
class HostProbe {
public:
    virtual ~HostProbe();
    // True when path exists on the host. Symlinks are followed: a dangling link is missing
    // there too, so an ENOENT through it is the command's own failure.
    virtual bool exists(const std::string& path) const = 0;
    // True when path is a Unix socket on the host (symlinks followed, as a client connects).
    virtual bool is_socket(const std::string& path) const = 0;
    // True when the user running Caretz could write path on the host, outside the sandbox: the
    // path itself when it exists, else its nearest existing ancestor, which would have to hold
    // what the command was creating. A write the host would refuse too is no refusal worth a
    // rerun outside (`npm install -g` into /usr, `make install` into a root-owned prefix).
    virtual bool may_write(const std::string& path) const = 0;
};

// The machine Caretz runs on.
class RealHostProbe : public HostProbe {
public:
    bool exists(const std::string& path) const override;
    bool is_socket(const std::string& path) const override;
    bool may_write(const std::string& path) const override;
};

}  // namespace caretz
