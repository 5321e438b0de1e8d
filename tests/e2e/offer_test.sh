#!/usr/bin/env bash
# The sandbox-off offer as a user meets it, in tmux, as the unprivileged test user: each kind
# of refusal asks; o reruns outside, Enter denies, s allows the exact command for the session;
# a timeout denies by itself; sudo asks for the password on the terminal while Caretz reads
# nothing; Ctrl-C stops only the rerun; non-interactive runs never ask; the audit log has one
# offer line per offer.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

own_home
ws=$(new_workspace)
# A name never used before, so no earlier run's audit lines can match its commands.
outside=$(runuser -u "$E2E_USER" -- mktemp -d "$TEST_HOME/outside.XXXXXXXX")
audit="$TEST_HOME/.local/state/caretz/audit.jsonl"
cleanup() {
    end_tmux
    rm -rf "$ws" "$outside" /etc/caretz-e2e-sudo-$$
    rm -f /run/docker.sock /run/dbus/system_bus_socket.caretz-e2e
    [[ -n "${fake_pids:-}" ]] && kill $fake_pids 2>/dev/null
}
trap cleanup EXIT

# Other tests may run Caretz as the same user at the same time, so lines are picked by the
# command (and the session) they are about.
audit_query() {
    python3 - "$audit" "$@" <<'PY'
import json, sys
path, what, needle = sys.argv[1], sys.argv[2], sys.argv[3]
offers = [json.loads(l) for l in open(path) if '"event":"offer"' in l]
if what == "decision":
    print([o for o in offers if needle in o["command"]][-1]["decision"])
else:  # the number of offers in the session that offered the command
    session = [o for o in offers if needle in o["command"]][0]["session"]
    print(sum(1 for o in offers if o["session"] == session))
PY
}
last_decision() { audit_query decision "$1"; }

# fake_socket PATH: a listening UNIX socket on the host, as a running daemon would have.
fake_socket() {
    python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); time.sleep(120)' "$1" &
    fake_pids="${fake_pids:-} $!"
    for _ in $(seq 50); do [[ -S $1 ]] && break; sleep 0.1; done
}

start_caretz() {
    start_pane "$(user_command_line /bin/bash "$ws" "$E2E_BIN --ask-sandbox-off $*; echo CARETZ-EXITED; sleep 600")"
    wait_for_screen "caretz>" 10
}



start_caretz

check "a refused write shows the offer" ask "touch $outside/once"
check "... naming what was refused" wait_for_screen "write: $outside/once" 2
check "... with the command and the reminder" wait_for_screen "already ran" 1
tmux_ send-keys -t main o
prompt_back
check "o reruns outside the sandbox: the file is on the host" test -e "$outside/once"
check "... and the audit log says allow_once" test "$(last_decision "$outside/once")" = allow_once

check "another refused write asks again" ask "touch $outside/denied"
tmux_ send-keys -t main Enter
prompt_back
check "Enter denies: nothing changes on the host" test ! -e "$outside/denied"
check "... and the audit log says deny" test "$(last_decision "$outside/denied")" = deny

# What a command's background process makes while the offer waits is protected before the
# next prompt, not only after the next command.
late="$ws/late/.git/hooks/pre-commit"
check "a refused command whose background process makes a repository asks" \
    ask "(sleep 1; git init -q late && printf '#!/bin/sh\\n' > late/.git/hooks/pre-commit) >/dev/null 2>&1 & touch $outside/late"
for _ in $(seq 100); do [[ -e $late ]] && break; sleep 0.1; done
tmux_ send-keys -t main Enter
prompt_back
check "... the hook it wrote meanwhile is moved aside before the next prompt" \
    contains "$(tmux_ capture-pane -p -J -t main -S -)" "wrote the git hook $late;"

check "s is offered too" ask "touch $outside/session"
tmux_ send-keys -t main s
prompt_back
check "s reruns outside" test -e "$outside/session"
rm -f "$outside/session"
offers=$(count_lines "Allow once")
type_command "touch $outside/session"
prompt_back
check "the same command then runs outside without asking" test -e "$outside/session"
check "... showing no offer" test "$(count_lines "Allow once")" -eq "$offers"
check "... and is logged as a session allowance" test "$(last_decision "$outside/session")" = session_allowance
check "the same program with other arguments asks again" ask "touch $outside/session other"
tmux_ send-keys -t main Escape
prompt_back
check "Esc denies" test ! -e "$outside/other"

tmux_ send-keys -t main -l '/allowances'; tmux_ send-keys -t main Enter
check "/allowances lists the allowed command" wait_for_count "^  touch $outside/session\$" 0 3

runuser -u "$E2E_USER" -- mkdir -p "$TEST_HOME/.ssh"
check "a hidden path that exists on the host asks" ask "ls ~/.ssh"
check "... as hidden" wait_for_screen "hidden: $TEST_HOME/.ssh" 1
tmux_ send-keys -t main d
prompt_back

check "sudo refused by the sandbox asks" ask 'sudo -n true; echo "exit=$?"'
check "... as sudo" wait_for_screen "sudo: sudo" 1
tmux_ send-keys -t main Enter
prompt_back

fake_socket /run/docker.sock
check "an unreachable Docker daemon whose socket exists asks" \
    ask 'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"; echo done'
check "... as docker" wait_for_screen "docker: /var/run/docker.sock" 1
tmux_ send-keys -t main Enter
prompt_back

bus_existed=0; [[ -S /run/dbus/system_bus_socket ]] && bus_existed=1
if [[ $bus_existed -eq 0 ]]; then mkdir -p /run/dbus; fake_socket /run/dbus/system_bus_socket; fi
check "an unreachable system bus whose socket exists asks" \
    ask 'echo "Failed to connect to bus: No such file or directory" >&2; exit 1'
check "... as bus" wait_for_screen "bus: /run/dbus/system_bus_socket" 1
tmux_ send-keys -t main Enter
prompt_back
[[ $bus_existed -eq 0 ]] && rm -f /run/dbus/system_bus_socket

# sudo on the host asks for the password on the terminal; Caretz reads nothing meanwhile.
check "sudo writing to /etc asks" ask "sudo touch /etc/caretz-e2e-sudo-$$ && sleep 3"
caretz_pid=$(caretz_pid)
tmux_ send-keys -t main o
check "sudo asks for the password on the terminal" wait_for_screen "password for $E2E_USER" 10
# From here until the rerun ends, every read Caretz makes is recorded.
strace -q -p "$caretz_pid" -e trace=read -s 200 -o "/tmp/caretz-e2e-strace-$$" &
strace_pid=$!
check "... (strace follows Caretz)" wait_until_traced "$caretz_pid"
tmux_ send-keys -t main -l "$E2E_PASSWORD"; tmux_ send-keys -t main Enter
for _ in $(seq 50); do [[ -e /etc/caretz-e2e-sudo-$$ ]] && break; sleep 0.1; done
kill "$strace_pid"; wait "$strace_pid" 2>/dev/null
check "the rerun ran as root after the password" test -e "/etc/caretz-e2e-sudo-$$"
check "Caretz read nothing from the terminal during the rerun" \
    test "$(grep -c '^read(0,' "/tmp/caretz-e2e-strace-$$")" -eq 0
check "... and never saw the password" not_contains "$(cat "/tmp/caretz-e2e-strace-$$")" "$E2E_PASSWORD"
rm -f "/tmp/caretz-e2e-strace-$$"
prompt_back
check "the password is not in the audit log" not_contains "$(cat "$audit")" "$E2E_PASSWORD"
check "the password is not on the screen" not_contains "$(screen_text)" "$E2E_PASSWORD"

check "a long rerun can be offered" ask "touch $outside/ctrlc && sleep 60.$$"
tmux_ send-keys -t main o
sleep 1
tmux_ send-keys -t main C-c
prompt_back
check "Ctrl-C stops only the rerun: Caretz is still there" not_contains "$(screen_text)" "CARETZ-EXITED"
type_command 'echo still-alive'
check "... and runs the next command" wait_for_count "^still-alive" 0 5
check "no rerun survives" test -z "$(pgrep -u "$E2E_USER" -fx "sleep 60.$$")"

check "one offer line per offer in the audit log" test "$(audit_query session_count "$outside/once")" -eq 12

wait_for_prompt
tmux_ send-keys -t main C-d
check "Ctrl-D leaves Caretz" wait_for_screen "CARETZ-EXITED" 5

start_pane "$(user_command_line /bin/bash "$ws" "$E2E_BIN --ask-sandbox-off --permission-timeout 2s; echo CARETZ-EXITED; sleep 600")"
wait_for_screen "caretz>" 10
check "with --permission-timeout the offer still shows" ask "touch $outside/timeout"
sleep 3
check "... and denies by itself when nobody answers" wait_for_screen "denied" 3
check "... so nothing changes on the host" test ! -e "$outside/timeout"
check "... and the audit log says timeout" test "$(last_decision "$outside/timeout")" = timeout

# An audit log that cannot be written (here: a folder in its place) stops every rerun.
state=$(runuser -u "$E2E_USER" -- mktemp -d "$TEST_HOME/state.XXXXXX")
runuser -u "$E2E_USER" -- mkdir -p "$state/caretz/audit.jsonl"
E2E_ENV=(XDG_STATE_HOME="$state")
start_caretz
E2E_ENV=()
check "with an unwritable audit log the offer still shows" ask "touch $outside/unlogged"
tmux_ send-keys -t main o
prompt_back
check "... but nothing runs outside" test ! -e "$outside/unlogged"
check "... and Caretz says why" wait_for_screen "cannot write the audit log" 3
rm -rf "$state"

OUT=$(printf '!touch %s/never\n' "$outside" | as_user /bin/bash "$ws" "$E2E_BIN" --ask-sandbox-off 2>&1)
check "a non-interactive run never asks" not_contains "$OUT" "Allow once"
check "... says on stderr what was refused and why nobody was asked" contains "$OUT" "nobody was asked"
check "... and the sandboxed result stands" test ! -e "$outside/never"

finish
