#include "escalation/host_probe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace caretz {

HostProbe::~HostProbe() = default;

bool RealHostProbe::exists(const std::string& path) const {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

bool RealHostProbe::is_socket(const std::string& path) const {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// Asked with the effective ids (AT_EACCESS), which open(2) checks, and on the host's own file
// systems: a path on a read-only mount of the host is refused there too (EROFS). A path that
// does not exist yet needs its nearest existing ancestor writable and searchable, as creating
// anything below it would.
bool RealHostProbe::may_write(const std::string& path) const {
    std::string existing = path;
    int mode = W_OK;
    while (!exists(existing)) {
        const auto slash = existing.find_last_of('/');
        if (slash == std::string::npos) return false;
        existing = slash == 0 ? "/" : existing.substr(0, slash);
        mode = W_OK | X_OK;
    }
    return faccessat(AT_FDCWD, existing.c_str(), mode, AT_EACCESS) == 0;
}

}  // namespace caretz
