#!/usr/bin/env bash
# with_dev_log.sh SOCKET COMMAND...: runs COMMAND (started as root) in a private mount namespace
# whose /dev/log is SOCKET, so syslog(3) there reaches the test's own syslog daemon (or, for a
# socket nobody listens on, nothing) while the machine's /dev/log and parallel tests stay as
# they are. /dev is a tmpfs in that namespace holding every entry of the real /dev again,
# since a bind mount needs /dev/log to exist and creating it in the real /dev would be seen by all.
set -euo pipefail
if [[ ${CARETZ_E2E_PRIVATE_DEV:-} != 1 ]]; then
    CARETZ_E2E_PRIVATE_DEV=1 exec unshare --mount --propagation private "$0" "$@"
fi
unset CARETZ_E2E_PRIVATE_DEV
socket=$1
shift

real=$(mktemp -d /tmp/caretz-e2e-dev.XXXXXX)
mount --rbind /dev "$real"
mount -t tmpfs -o mode=0755 caretz-e2e-dev /dev
shopt -s dotglob nullglob
for entry in "$real"/*; do
    name=${entry##*/}
    if [[ $name == log ]]; then
        continue
    elif [[ -L $entry || -c $entry || -b $entry ]]; then
        # Device nodes are copied, not bound: /dev/ptmx finds its devpts as the pts folder
        # beside it in the same mount, which a node bound on its own does not have.
        cp -a "$entry" "/dev/$name"
    elif [[ -d $entry ]]; then
        mkdir "/dev/$name"
        mount --rbind "$entry" "/dev/$name"
    else
        touch "/dev/$name"
        mount --bind "$entry" "/dev/$name"
    fi
done
touch /dev/log
mount --bind "$socket" /dev/log
umount --lazy "$real"
rmdir "$real"
exec "$@"
