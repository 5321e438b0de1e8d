#include "sandbox/namespace_binds.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/spawn.h"

namespace caretz {

namespace {

// Where the child's steps fail; the exit status names the step, errno follows on the pipe.
enum Step : int { ok = 0, enter_user, enter_mounts, open_path, clone_tree, make_read_only, attach };

const char* step_name(int step) {
    switch (step) {
        case enter_user:
            return "cannot enter the sandbox's user namespace";
        case enter_mounts:
            return "cannot enter the sandbox's mount namespace";
        case open_path:
            return "cannot open the path without following a symlink";
        case clone_tree:
            return "cannot clone the mount";
        case make_read_only:
            return "cannot make the mount read-only";
        case attach:
            return "cannot attach the mount";
        default:
            return "the helper process failed";
    }
}

// `path` opened to be mounted over, never through a symlink; -1 when it cannot be.
int open_target(const char* path) {
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
}

// Binds `path` onto itself read-only, with the mounts below it.
int bind_onto_itself(const char* path) {
    const int target = open_target(path);
    if (target < 0) return open_path;
    int tree = static_cast<int>(
        ::syscall(SYS_open_tree, target, "",
                  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    if (tree < 0) return clone_tree;
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) !=
        0)
        return make_read_only;
    if (::syscall(SYS_move_mount, tree, "", target, "",
                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
        return attach;
    ::close(tree);
    ::close(target);
    return ok;
}

// Moves the detached mount `mount` over `path`.
int attach_over(const char* path, int mount) {
    const int target = open_target(path);
    if (target < 0) return open_path;
    if (::syscall(SYS_move_mount, mount, "", target, "",
                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
        return attach;
    ::close(target);
    return ok;
}

// What the child does, all made before the vfork: it runs in Caretz's memory, and only makes
// system calls. It leaves the step that failed and errno in `step` and `error`.
struct InSandbox {
    int mount_ns_fd;
    int (*steps)(const InSandbox&);
    const std::vector<std::string>* paths;
    const std::vector<UniqueFd>* mounts;  // attach_in_sandbox's, one per path
    int step = ok;
    int error = 0;
};

std::string in_sandbox(InSandbox& plan) {
    const pid_t pid = vfork_child(
        [](const void* p) {
            auto& child = *static_cast<InSandbox*>(const_cast<void*>(p));
            auto fail = [&](int step) {
                child.error = errno;
                child.step = step;
                ::_exit(1);
            };
            // The mount namespace belongs to the user namespace bwrap made first; the sandbox's
            // processes may sit in one nested below it, which has no say over these mounts.
            const int user_ns = ::ioctl(child.mount_ns_fd, NS_GET_USERNS);
            if (user_ns < 0 || ::setns(user_ns, CLONE_NEWUSER) != 0) fail(enter_user);
            if (::setns(child.mount_ns_fd, CLONE_NEWNS) != 0) fail(enter_mounts);
            if (const int step = child.steps(child)) fail(step);
            ::_exit(0);
        },
        &plan);
    if (pid < 0) return std::string("cannot fork: ") + std::strerror(errno);
    const int status = wait_for_exit(pid);
    if (status == 0) return "";
    // The child has ended (vfork) and left why in `plan`.
    return std::string(step_name(plan.step)) + ": " + std::strerror(plan.error);
}

}  // namespace

std::string bind_in_sandbox(int mount_ns_fd, const std::vector<std::string>& read_only) {
    InSandbox plan{mount_ns_fd,
                   [](const InSandbox& child) {
                       for (const auto& path : *child.paths)
                           if (const int step = bind_onto_itself(path.c_str())) return step;
                       return static_cast<int>(ok);
                   },
                   &read_only, nullptr};
    return in_sandbox(plan);
}

std::string attach_in_sandbox(int mount_ns_fd, const std::vector<std::string>& targets,
                              const std::vector<UniqueFd>& mounts) {
    InSandbox plan{mount_ns_fd,
                   [](const InSandbox& child) {
                       for (size_t i = 0; i < child.paths->size(); ++i)
                           if (const int step =
                                   attach_over((*child.paths)[i].c_str(), (*child.mounts)[i].get()))
                               return step;
                       return static_cast<int>(ok);
                   },
                   &targets, &mounts};
    return in_sandbox(plan);
}

}  // namespace caretz
