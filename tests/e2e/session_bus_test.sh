#!/usr/bin/env bash
# The user's session bus (DESIGN.md section 5): with a stand-in session bus listening at
# $XDG_RUNTIME_DIR/bus on the host (hidden in the sandbox with /run), `systemctl --user restart
# x; echo done` exits 0 and still gets the offer, which says it is the session bus; Allow once
# runs the command on the host, where systemctl reaches the stand-in. Without the socket on the
# host, nothing is offered.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

own_home
ws=$(new_workspace)
uid=$(id -u "$E2E_USER")
runtime=/run/user/$uid
made_runtime=0
[[ -d $runtime ]] || { install -d -m 700 -o "$E2E_USER" -g "$E2E_USER" "$runtime"; made_runtime=1; }
bus="$runtime/bus"
connections="$TEST_HOME/bus-connections"
modes="$TEST_HOME/modes"
cleanup() {
    end_tmux
    [[ -n "${bus_pid:-}" ]] && kill "$bus_pid" 2>/dev/null
    rm -f "$bus"
    ((made_runtime)) && rm -rf "$runtime"
    rm -rf "$TEST_HOME"
}
trap cleanup EXIT
E2E_ENV=(XDG_RUNTIME_DIR="$runtime")

check "setup: no session bus on the host yet" test ! -e "$bus"
start_caretz_pane "$ws" --ask-sandbox-off
type_command "systemctl --user restart x; echo done"
check "without the session bus's socket on the host, nothing is offered" prompt_back 15
check "... the sandboxed attempt's output stands" wait_for_screen "done" 1
check "... and no offer was shown" not contains "$(whole_screen)" "Allow once"

# The stand-in: a listening socket owned by the user, as the user's dbus-daemon would have,
# that notes each connection.
runuser -u "$E2E_USER" -- python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen()
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as log:
        log.write("connected\n")
    c.close()' "$bus" "$connections" &
bus_pid=$!
for _ in $(seq 50); do [[ -S $bus ]] && break; sleep 0.1; done

check "systemctl --user restart x; echo done exits 0 and gets the offer" \
    ask "systemctl --user restart x; echo done" 15
check "... which says it is the session bus" wait_for_screen "your session bus" 1
check "... and names its socket" wait_for_screen "bus: $bus" 1
check "... and the evidence" wait_for_screen "Failed to connect to bus" 1
check "... the sandboxed attempt never reached the stand-in" test ! -e "$connections"
dones=$(count_lines '^done')
tmux_ send-keys -t main o
check "Allow once runs it on the host" prompt_back 15
check "... where systemctl reaches the session bus" test -s "$connections"
check "... and the rest of the command ran there" wait_for_count '^done' "$dones" 5

type_line "/quit"
wait_for_screen "CARETZ-EXITED" 10
finish
