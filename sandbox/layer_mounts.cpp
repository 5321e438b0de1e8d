#include "sandbox/layer_mounts.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "pty/fd_io.h"
#include "sandbox/namespace_binds.h"
#include "sandbox/preflight.h"
#include "sandbox/sandbox.h"
#include "sandbox/spawn.h"

namespace caretz {

namespace {

// What the child needs, all made before the vfork: it runs in Caretz's memory and must not
// allocate.
struct LayerChild {
    const std::vector<OverlayMount>* overlays;
    const std::string* uid_map;
    const std::string* gid_map;
    // What to say when an overlay cannot be made, one line each, and last when the user
    // namespace cannot be made; errno's text follows.
    const std::vector<std::string>* cannot;
    int socket;  // the child's end: each overlay's descriptor, or what went wrong
};

bool write_proc_file(const char* path, std::string_view text) {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool written = write_all(fd, text);
    ::close(fd);
    return written;
}

[[noreturn]] void tell_and_exit(const LayerChild& child, const std::string& what) {
    // strerrordesc_np, unlike strerror, never translates, so it never allocates.
    const char* reason = ::strerrordesc_np(errno);
    char text[1024];
    const size_t length = std::min(what.size(), sizeof text - 1);
    std::memcpy(text, what.data(), length);
    const size_t reason_length =
        std::min(std::strlen(reason ? reason : "unknown error"), sizeof text - 1 - length);
    std::memcpy(text + length, reason ? reason : "unknown error", reason_length);
    ::send(child.socket, text, length + reason_length, MSG_NOSIGNAL);
    ::_exit(126);
}

// An overlay over `overlay.target`, made from its store folder (the child's cwd) and not
// attached anywhere; -1 with errno set when it cannot be made.
int make_overlay(const OverlayMount& overlay) {
    const int context = static_cast<int>(::syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC));
    if (context < 0) return -1;
    auto set = [&](const char* key, const std::string& value) {
        return ::syscall(SYS_fsconfig, context, FSCONFIG_SET_STRING, key, value.c_str(), 0) == 0;
    };
    int mount = -1;
    if (set("lowerdir", overlay.target) && set("upperdir", overlay.upper) &&
        set("workdir", overlay.work) &&
        ::syscall(SYS_fsconfig, context, FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) == 0 &&
        ::syscall(SYS_fsconfig, context, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0)
        mount = static_cast<int>(
            ::syscall(SYS_fsmount, context, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
    const int error = errno;
    ::close(context);
    errno = error;
    return mount;
}

[[noreturn]] void run_layer_child(const LayerChild& child) {
    const auto& overlays = *child.overlays;
    const auto& cannot = *child.cannot;
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 ||
        !write_proc_file("/proc/self/setgroups", "deny") ||
        !write_proc_file("/proc/self/uid_map", *child.uid_map) ||
        !write_proc_file("/proc/self/gid_map", *child.gid_map))
        tell_and_exit(child, cannot.back());
    for (size_t i = 0; i < overlays.size(); ++i) {
        const int mount = ::chdir(overlays[i].folder.c_str()) == 0 ? make_overlay(overlays[i]) : -1;
        if (mount < 0 || send_with_fds(child.socket, "m", &mount, 1) != 1)
            tell_and_exit(child, cannot[i]);
    }
    // Held by Caretz, so that its end is not this child's (see LayerMounts::held).
    const int held = ::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (held < 0 || send_with_fds(child.socket, "n", &held, 1) != 1)
        tell_and_exit(child, cannot.back());
    ::_exit(0);
}

}  // namespace

LayerMounts make_layer_mounts(const CacheLayer& layer) {
    // The reused work folder only for the process's first: an ACP client's later session of
    // the workspace may start while the last one's sandbox still ends.
    static std::atomic<bool> any_before{false};
    const bool first = !any_before.exchange(true);
    if (layer.upper == "upper") wait_for_upper_writers(layer.store, std::chrono::seconds(2));
    const auto work = make_work_folders(layer, ::getpid(), first);
    if (!work)
        throw SandboxStartError("cannot make a work folder for the private cache layer in " +
                                layer.store + ": " + std::strerror(errno));
    const std::vector<OverlayMount> overlays = cache_overlays(layer, *work);
    const std::string uid_map = "0 " + std::to_string(::getuid()) + " 1";
    const std::string gid_map = "0 " + std::to_string(::getgid()) + " 1";
    std::vector<std::string> cannot;
    for (const auto& overlay : overlays)
        cannot.push_back("cannot mount the private cache layer over " + overlay.target +
                         " (caretz doctor says more): ");
    cannot.emplace_back(
        "cannot make the user namespace of the private cache layer "
        "(caretz doctor says more): ");
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sockets) != 0)
        throw SandboxStartError(std::string("cannot create a socket for the cache layer: ") +
                                std::strerror(errno));
    UniqueFd ours(sockets[0]), theirs(sockets[1]);
    const LayerChild child{&overlays, &uid_map, &gid_map, &cannot, theirs.get()};

    const pid_t pid = vfork_child(
        [](const void* plan) { run_layer_child(*static_cast<const LayerChild*>(plan)); }, &child);
    if (pid < 0) throw SandboxStartError(std::string("cannot fork: ") + std::strerror(errno));
    theirs.reset();
    // The child has ended (vfork): what it sent waits in the socket, an overlay per message,
    // and last, why it stopped if it did.
    LayerMounts made;
    made.first = first;
    std::string why;
    for (;;) {
        char text[1024];
        std::vector<UniqueFd> received;
        const ssize_t got = receive_with_fds(ours.get(), text, sizeof text, received, MSG_DONTWAIT);
        if (got <= 0) break;
        if (received.size() == 1 && text[0] == 'm' && made.mounts.size() < overlays.size()) {
            made.targets.push_back(overlays[made.mounts.size()].target);
            made.mounts.push_back(std::move(received[0]));
        } else if (received.size() == 1 && text[0] == 'n') {
            made.held = std::move(received[0]);
        } else {
            why.assign(text, static_cast<size_t>(got));
        }
    }
    const int status = wait_for_exit(pid);
    if (status == 0 && made.mounts.size() == overlays.size() && made.held.valid()) return made;
    // No sandbox could start here either: that says what to change.
    if (auto reason = sandbox_unavailable_reason()) throw SandboxStartError(*reason);
    if (!why.empty()) throw SandboxStartError(why);
    throw SandboxStartError("the private cache layer's overlays could not be made (exit status " +
                            std::to_string(status) + ")");
}

std::string attach_cache_layer(int gate, const LayerMounts& mounts) {
    char said[8];
    std::vector<UniqueFd> namespaces;
    const ssize_t got = receive_with_fds(gate, said, sizeof said, namespaces);
    // Gone before it got there: bwrap's start failed, and its caller reports why.
    if (got <= 0) return "";
    if (namespaces.size() != 1)
        return "the sandbox's first program sent no mount namespace to put the layer in";
    const std::string why = attach_in_sandbox(namespaces[0].get(), mounts.targets, mounts.mounts);
    if (!why.empty()) return why;
    return send_all(gate, "g") ? "" : std::string("the sandbox ended meanwhile");
}

}  // namespace caretz
