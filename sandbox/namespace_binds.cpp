#include "sandbox/namespace_binds.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

// Binds `path` onto itself read-only, with the mounts below it. Only system calls: this runs
// in a child forked from a process with threads.
int bind_onto_itself(const char* path) {
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    int target = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
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

}  // namespace

std::string bind_in_sandbox(int mount_ns_fd, const std::vector<std::string>& read_only) {
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0)
        return std::string("cannot make a pipe: ") + std::strerror(errno);
    pid_t pid = ::fork();
    if (pid < 0) {
        int err = errno;
        ::close(report[0]);
        ::close(report[1]);
        return std::string("cannot fork: ") + std::strerror(err);
    }
    if (pid == 0) {
        ::close(report[0]);
        auto fail = [&](int step) {
            int err = errno;
            [[maybe_unused]] ssize_t n = ::write(report[1], &err, sizeof err);
            ::_exit(step);
        };
        // The mount namespace belongs to the user namespace bwrap made first; the sandbox's
        // processes may sit in one nested below it, which has no say over these mounts.
        int user_ns = ::ioctl(mount_ns_fd, NS_GET_USERNS);
        if (user_ns < 0 || ::setns(user_ns, CLONE_NEWUSER) != 0) fail(enter_user);
        if (::setns(mount_ns_fd, CLONE_NEWNS) != 0) fail(enter_mounts);
        for (const auto& path : read_only)
            if (int step = bind_onto_itself(path.c_str())) fail(step);
        ::_exit(ok);
    }
    ::close(report[1]);
    int err = 0;
    ssize_t n;
    while ((n = ::read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
    }
    ::close(report[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == ok) return "";
    std::string what = WIFEXITED(status) ? step_name(WEXITSTATUS(status)) : step_name(-1);
    if (n == sizeof err) what += std::string(": ") + std::strerror(err);
    return what;
}

}  // namespace caretz
