#include "sandbox/layer_namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "pty/fd_io.h"
#include "pty/signal_pipe.h"
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
    // What to say when an overlay cannot be mounted, one line each, and last when the
    // namespaces cannot be made; errno's text follows.
    const std::vector<std::string>* cannot;
    int socket;  // the child's end: the namespaces' descriptors, or what went wrong
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

[[noreturn]] void run_layer_child(const LayerChild& child) {
    const auto& overlays = *child.overlays;
    const auto& cannot = *child.cannot;
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 ||
        !write_proc_file("/proc/self/setgroups", "deny") ||
        !write_proc_file("/proc/self/uid_map", *child.uid_map) ||
        !write_proc_file("/proc/self/gid_map", *child.gid_map))
        tell_and_exit(child, cannot.back());
    for (size_t i = 0; i < overlays.size(); ++i)
        if (::chdir(overlays[i].folder.c_str()) != 0 ||
            ::mount("overlay", overlays[i].target.c_str(), "overlay", 0,
                    overlays[i].options.c_str()) != 0)
            tell_and_exit(child, cannot[i]);
    const int fds[2] = {::open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC),
                        ::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC)};
    if (fds[0] < 0 || fds[1] < 0 || send_with_fds(child.socket, "y", fds, 2) != 1)
        tell_and_exit(child, cannot.back());
    ::_exit(0);
}

}  // namespace

LayerNamespaces make_layer_namespaces(const CacheLayer& layer, bool first) {
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
    // The child has ended (vfork): what it sent waits in the socket, the namespaces or why not.
    char text[1024];
    std::vector<UniqueFd> received;
    const ssize_t got = receive_with_fds(ours.get(), text, sizeof text, received, MSG_DONTWAIT);
    const int status = wait_for_exit(pid);
    LayerNamespaces made;
    if (received.size() == 2) {
        made.user = std::move(received[0]);
        made.mount = std::move(received[1]);
    }
    if (status == 0 && made.user.valid() && made.mount.valid()) return made;
    // No sandbox could start here either: that says what to change.
    if (auto reason = sandbox_unavailable_reason()) throw SandboxStartError(*reason);
    if (got > 0 && received.empty())
        throw SandboxStartError(std::string(text, static_cast<size_t>(got)));
    throw SandboxStartError("the private cache layer's namespaces could not be made (exit status " +
                            std::to_string(status) + ")");
}

LayerNamespacesAhead::LayerNamespacesAhead(const CacheLayer& layer) : layer_(layer) {
    std::promise<LayerNamespaces> made;
    ahead_ = made.get_future();
    std::future<void> taken = taken_.get_future();
    // The reused work folder only for the process's first: an ACP client's later session of
    // the workspace may start while the last one's sandbox still ends.
    static std::atomic<bool> any_before{false};
    const bool first = !any_before.exchange(true);
    // Its own copy of the layer: the thread may outlive this object (a start that failed).
    SignalsBlocked inherited;
    std::thread([layer, first, made = std::move(made), taken = std::move(taken)]() mutable {
        try {
            made.set_value(make_layer_namespaces(layer, first));
        } catch (...) {
            made.set_exception(std::current_exception());
        }
        // Once Caretz starts bwrap (or gives up on it), no sooner: until then this thread's
        // CPU is the main thread's other one.
        taken.wait();
        remove_stale_work_folders(layer);
    }).detach();
}

LayerNamespacesAhead::~LayerNamespacesAhead() {
    if (ahead_) taken_.set_value();
}

LayerNamespaces LayerNamespacesAhead::take() {
    std::unique_lock lock(mutex_);
    if (!ahead_) return make_layer_namespaces(layer_);
    auto ahead = std::move(*ahead_);
    ahead_.reset();
    lock.unlock();
    taken_.set_value();
    return ahead.get();
}

}  // namespace caretz
