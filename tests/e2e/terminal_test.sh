#!/usr/bin/env bash
# The REPL on a real terminal (tmux), as the unprivileged test user: `!` commands show their
# output live, follow the window size, read the user's keys, stop on Ctrl-C without leaving
# Caretz; the terminal's modes come back after Ctrl-D, SIGTERM and SIGHUP, and no sandbox
# process outlives Caretz.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

ws=$(new_workspace)
modes="$E2E_HOME/stty-$$"
trap 'tmux_ kill-server 2>/dev/null; rm -rf "$ws" "$modes".*' EXIT

# run_in_pane: saves the terminal's modes, runs Caretz, saves them again after it ends.
run_in_pane() {
    start_pane "$(user_command_line /bin/bash "$ws" "stty -g > $modes.before; $E2E_BIN; stty -g > $modes.after; echo CARETZ-EXITED; sleep 600")"
    wait_for_screen "caretz>" 10
}
# The Caretz running in this test's pane (other tests may run Caretz at the same time).
caretz_pid() {
    local pane pid p
    pane=$(tmux_ display-message -p -t main '#{pane_pid}')
    for pid in $(pgrep -u "$E2E_USER" -fx "$E2E_BIN"); do
        p=$pid
        while [[ $p -gt 1 ]]; do
            [[ $p -eq $pane ]] && { echo "$pid"; return; }
            p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null || echo 1)
        done
    done
}
type_line() { tmux_ send-keys -t main -l "$1"; tmux_ send-keys -t main Enter; }
# A process is gone once it is missing or a zombie waiting for init to reap it.
gone() {
    for _ in $(seq 20); do
        [[ ! -e /proc/$1 ]] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
modes_restored() { [[ -s $modes.after ]] && diff -q "$modes.before" "$modes.after" >/dev/null; }

run_in_pane
type_line '!echo hi-from-the-sandbox'
check "!echo shows its output" wait_for_screen "hi-from-the-sandbox" 5

tmux_ resize-window -t main -x 97 -y 31
sleep 0.3
type_line '!tput cols; tput lines'
check "a resized window reaches the command (tput cols)" wait_for_screen $'97\n31' 5

# Each command shows a prompt first, spelled so that the typed command line does not show it,
# so the keys are typed only once the command runs.
type_line '!read -r -p "s""ay> " x; echo "got=$x"'
wait_for_screen "say> " 15
type_line 'typed-by-the-user'
check "the user's keys reach a command that reads stdin" wait_for_screen "got=typed-by-the-user" 5

type_line "!python3 -c 'print(input(\"rev\" \"erse> \")[::-1])'"
wait_for_screen "reverse> " 15
type_line 'olleh'
check "an interactive program gets the keys too" wait_for_screen $'\nhello' 15

type_line '!echo sleeping; sleep 30'
wait_for_screen $'\nsleeping' 5
# A Ctrl-C that lands while bash is still forking `sleep` is lost, in any terminal: press it
# once `sleep` runs, as a person watching the screen would.
for _ in $(seq 50); do pgrep -u "$E2E_USER" -fx 'sleep 30' >/dev/null && break; sleep 0.1; done
sleep 0.3
tmux_ send-keys -t main C-c
check "Ctrl-C interrupts the command with status 130" wait_for_screen "[exit 130]" 5
type_line '!echo after-ctrl-c'
check "... and Caretz goes on" wait_for_screen "after-ctrl-c" 5

sandbox=$(pgrep -P "$(caretz_pid)" | head -1)
tmux_ send-keys -t main C-d
check "Ctrl-D leaves Caretz" wait_for_screen "CARETZ-EXITED" 5
check "... and the terminal's modes are as before" modes_restored
check "... and the sandbox is gone" gone "$sandbox"

for signal in TERM HUP; do
    rm -f "$modes".*
    run_in_pane
    type_line '!echo warm'
    wait_for_screen "warm" 5
    pid=$(caretz_pid)
    sandbox=$(pgrep -P "$pid" | head -1)
    kill "-$signal" "$pid"
    check "after SIG$signal Caretz is gone" wait_for_screen "CARETZ-EXITED" 5
    check "... the terminal's modes are restored" modes_restored
    check "... and no sandbox process survives" gone "$sandbox"
done

finish
