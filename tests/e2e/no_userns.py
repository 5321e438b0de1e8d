#!/usr/bin/env python3
"""no_userns.py UID GID COMMAND...: runs COMMAND as UID:GID where user namespaces are off.

A machine with user namespaces disabled, without changing this machine's setting (which a
container may not allow, and which would disturb anything else running): COMMAND runs in a
user namespace of its own whose user.max_user_namespaces is 0, so no further namespace can
be made there, as on a host with the sysctl at 0. Must run as root. Exits with COMMAND's
status.
"""
import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000
uid, gid, command = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
ready_r, ready_w = os.pipe()
mapped_r, mapped_w = os.pipe()
pid = os.fork()
if pid == 0:
    if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWUSER) != 0:
        os._exit(125)
    os.write(ready_w, b"x")
    os.read(mapped_r, 1)
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    os.execvp(command[0], command)
os.read(ready_r, 1)
# Root and the user keep their ids inside, so files and the test's checks look the same.
for name, own in (("uid_map", uid), ("gid_map", gid)):
    with open("/proc/%d/%s" % (pid, name), "w") as f:
        f.write("0 0 1\n%d %d 1\n" % (own, own))
os.write(mapped_w, b"x")
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
