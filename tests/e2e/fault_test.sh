#!/usr/bin/env bash
# Faults an ops tool must survive, as the unprivileged test user: the sandbox killed under a
# running session, a full disk where the audit log lives, and user namespaces switched off.
# (SIGHUP and SIGTERM are e2e_terminal's, bwrap missing e2e_cli's, and a model server that
# hangs, returns garbage or dies mid-stream e2e_agent_errors'.)
# Each ends with a clear message, nothing run outside the sandbox that the user did not get
# to approve with an audit line on disk, no sandbox process left and the terminal restored.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

own_home
ws=$TEST_HOME/ws
outside=$TEST_HOME/outside
runuser -u "$E2E_USER" -- mkdir -p "$ws" "$outside"
state=$TEST_HOME/.local/state/caretz
modes=$TEST_HOME/stty
cleanup() {
    end_tmux
    mountpoint -q "$state" && umount "$state"
    rm -rf "$TEST_HOME"
}
trap cleanup EXIT

sandbox_of() { pgrep -u "$E2E_USER" -P "$1" -x bwrap; }
start_caretz() { start_caretz_pane "$ws" "$@"; }

# --- the sandbox killed under the session ------------------------------------------------------
start_caretz
type_line '!echo before-the-kill'
wait_for_screen "before-the-kill" 10
# Keys typed while a command still runs go to that command, so the next one waits for the prompt.
wait_for_prompt
caretz=$(caretz_pid)
type_line '!sleep 3000; echo sleep-finished'
sleep 1
bwrap=$(sandbox_of "$caretz")
inside=$(descendants "$bwrap" | tr '\n' ' ')
check "a session sandbox runs, with the command inside it" contains "$(ps -o args= $inside 2>/dev/null)" "sleep 3000"
kill -9 "$bwrap"
check "SIGKILL of the sandbox: Caretz says the sandbox ended" wait_for_screen "the sandbox session ended unexpectedly" 10
sleep 1
check "... with nothing of the old sandbox left" eval '[[ -z $(ps -o stat= $inside | grep -v Z) ]]'
type_line '!echo after-the-kill; echo $((6*7))'
check "... and the next command runs in a fresh sandbox" wait_for_screen $'after-the-kill\n42' 15
new_bwrap=$(sandbox_of "$caretz")
check "... which is a new bwrap" test -n "$new_bwrap" -a "$new_bwrap" != "$bwrap"

# The supervisor inside, killed alone, the same way.
supervisor=$(for p in $(descendants "$new_bwrap"); do
    [[ $(ps -o comm= -p "$p") == caretz ]] && echo "$p"; done | head -1)
check "the session's supervisor runs inside the new sandbox" test -n "$supervisor"
type_line '!sleep 3000'
sleep 1
kill -9 "$supervisor"
check "SIGKILL of the supervisor inside: Caretz says so too" wait_for_count "ended unexpectedly" 1 10
type_line '!echo still-going-$((6*7))'
check "... and the session goes on" wait_for_screen "still-going-42" 15
wait_for_prompt
tmux_ send-keys -t main C-d
wait_for_screen "CARETZ-EXITED" 10
check "after Ctrl-D the terminal's modes are as before" modes_restored
check "... and no sandbox process is left" test -z "$(pgrep -u "$E2E_USER" -P "$caretz")$(descendants "$new_bwrap")"

# --- a full disk where the audit log lives ----------------------------------------------------
# A small file system for Caretz's state folder, holding one earlier audit line of nearly a
# page, then filled: the next line fits only in part, and must not be left half written.
runuser -u "$E2E_USER" -- mkdir -p "$state"
mount -t tmpfs -o size=64k,mode=0700,uid="$(id -u "$E2E_USER")",gid="$(id -g "$E2E_USER")" tmpfs "$state"
python3 - "$state/audit.log" <<'PY'
import json, sys
line = json.dumps({"event": "earlier", "note": "x" * 3950}) + "\n"
open(sys.argv[1], "w").write(line)
PY
chown "$E2E_USER:" "$state/audit.log"
runuser -u "$E2E_USER" -- dd if=/dev/zero of="$state/fill" bs=4k 2>/dev/null
audit_before=$(md5sum <"$state/audit.log")
start_caretz --ask-sandbox-off
type_line "!touch $outside/approved-file"
wait_for_screen "Allow once" 15
tmux_ send-keys -t main o
check "a full disk: Caretz says it cannot write the audit log" wait_for_screen "cannot write the audit log" 10
check "... so the approved command does not run outside" test ! -e "$outside/approved-file"
check "... and the audit log holds no half line" test "$(md5sum <"$state/audit.log")" == "$audit_before"
type_line '!echo disk-full-$((6*7))'
check "... and the session goes on" wait_for_screen "disk-full-42" 15
wait_for_prompt
tmux_ send-keys -t main C-d
wait_for_screen "CARETZ-EXITED" 10
check "... and the terminal's modes come back" modes_restored
umount "$state"

# --- Caretz itself killed ---------------------------------------------------------------------------
# SIGKILL gives Caretz no chance to clean up: bwrap dies with it, but with --no-session (where
# every command's sandbox binds the proxy's socket afresh, so its path has to stay) the proxy's
# folder stays until a later Caretz of the same user finds that nobody listens on it any more.
run=$TEST_HOME/run
runuser -u "$E2E_USER" -- mkdir -m 700 "$run"
E2E_ENV=(XDG_RUNTIME_DIR="$run")
as_user /bin/bash "$ws" "$E2E_BIN" exec --no-session 'sleep 3001' >/dev/null 2>&1 </dev/null &
for _ in $(seq 100); do
    sleeper=$(pgrep -u "$E2E_USER" -f '^sleep 3001$')
    [[ -n $sleeper ]] && break
    sleep 0.1
done
killed=$(pgrep -u "$E2E_USER" -f "^$E2E_BIN exec --no-session sleep 3001")
left=$(ls -d "$run"/caretz-net-* 2>/dev/null)
check "a running caretz exec has its proxy folder" test -n "$killed" -a -d "$left"
kill -9 "$killed"
sleep 1
check "SIGKILL of Caretz: nothing of its sandbox is left" eval '[[ -z $(pgrep -u "$E2E_USER" -f "sleep 3001") ]]'
check "... but its proxy folder is" test -d "$left"
touch -d '2 minutes ago' "$left"
caretz_as_user /bin/bash "$ws" exec 'echo next-$((6*7))'
check "the next Caretz runs" contains "$OUT" "next-42"
check "... and removes the folder nobody listens on any more" test -n "$left" -a ! -e "$left"
check "... leaving no folder of its own" test -z "$(ls -A "$run")"
E2E_ENV=()

# --- user namespaces off ------------------------------------------------------------------------
# In a user namespace of the test's own where no further one can be made (no_userns.py), as
# on a host with user.max_user_namespaces=0.
for mode in "" --no-session; do
    OUT=$(cd "$ws" && python3 "$(dirname "$0")/no_userns.py" "$(id -u "$E2E_USER")" "$(id -g "$E2E_USER")" \
        env -i HOME="$TEST_HOME" USER="$E2E_USER" PATH=/usr/bin:/bin SHELL=/bin/bash LANG=C.UTF-8 \
        "$E2E_BIN" exec $mode "touch $ws/ran-unsandboxed" 2>&1 </dev/null)
    RC=$?
    check "namespaces off ${mode:-(session)}: exit 125" test "$RC" -eq 125
    check "... with a message naming the setting" contains "$OUT" "sysctl -w user.max_user_namespaces"
    check "... and the command did not run at all" test ! -e "$ws/ran-unsandboxed"
done

finish
