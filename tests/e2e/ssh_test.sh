#!/usr/bin/env bash
# Over ssh, as ops people use it: Caretz runs through `ssh -tt` to a loopback sshd in a tmux
# pane, `!echo` works, and dropping the connection leaves no Caretz or sandbox process behind.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d /tmp/caretz-e2e-ssh.XXXXXX)
chmod 755 "$tmp"
own_home
ws=$(new_workspace)
cleanup() {
    end_tmux
    [[ -n "${sshd_pid:-}" ]] && kill "$sshd_pid" 2>/dev/null
    rm -rf "$tmp" "$ws"
}
trap cleanup EXIT

ssh-keygen -A >/dev/null 2>&1
mkdir -p /run/sshd
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
runuser -u "$E2E_USER" -- ssh-keygen -q -t ed25519 -N '' -f "$tmp/user-key" 2>/dev/null ||
    { ssh-keygen -q -t ed25519 -N '' -f "$tmp/user-key" && chown "$E2E_USER" "$tmp/user-key"*; }
install -m 0644 "$tmp/user-key.pub" "$tmp/authorized_keys"
cat >"$tmp/sshd_config" <<CFG
ListenAddress 127.0.0.1
Port $port
HostKey /etc/ssh/ssh_host_ed25519_key
AuthorizedKeysFile $tmp/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PidFile $tmp/sshd.pid
CFG
/usr/sbin/sshd -D -f "$tmp/sshd_config" -E "$tmp/sshd.log" &
sshd_pid=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

start_pane "runuser -u $E2E_USER -- ssh -tt -i $tmp/user-key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -p $port $E2E_USER@127.0.0.1 'cd $ws && HOME=$TEST_HOME $E2E_BIN'; echo SSH-ENDED; sleep 600"
check "Caretz starts over ssh -tt" wait_for_screen "caretz>" 15
tmux_ send-keys -t main -l '!echo over-ssh'; tmux_ send-keys -t main Enter
check "!echo works over ssh" wait_for_screen $'\nover-ssh' 10

# This test's sshd runs the remote Caretz; other tests may run Caretz at the same time.
caretz=$(descendant_named "$sshd_pid" caretz)
sandbox=$(pgrep -P "${caretz:-0}" | head -1)
check "the remote Caretz and its sandbox are running" test -n "$caretz" -a -n "$sandbox"

kill -9 "$(descendant_named "$(pane_pid)" ssh)"
check "the connection drops" wait_for_screen "SSH-ENDED" 10
check "no Caretz process is left behind" gone "${caretz:-0}" 30
check "no sandbox process is left behind" gone "${sandbox:-0}" 30
check "nothing else of that sandbox runs" test -z "$(pgrep -u "$E2E_USER" -f "cd $ws")"

finish
