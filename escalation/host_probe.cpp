#include "escalation/host_probe.h"

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

bool RealHostProbe::may_write(const std::string& path) const {
    std::string existing = path;
    while (!exists(existing)) {
        const auto slash = existing.find_last_of('/');
        if (slash == std::string::npos) return false;
        existing = slash == 0 ? "/" : existing.substr(0, slash);
    }
    return access(existing.c_str(), W_OK) == 0;
}

}  // namespace caretz
