#!/usr/bin/env bash
# audit.syslog against Debian's rsyslogd, as the unprivileged test user in a home of the test's
# own: the decision of an offer answered in tmux, the rerun's end and the use of a session
# allowance reach rsyslogd under the ident caretz with facility authpriv, one line each with the
# command escaped; a command with a newline and an escape sequence cannot make a line of its
# own. Without the key nothing goes to syslog; with syslog unreachable or stuck the offer and
# the rerun work and the JSONL file still has both. rsyslogd runs with a config of its own, and Caretz in
# a private mount namespace whose /dev/log is that rsyslogd's socket (with_dev_log.sh), so the
# machine's syslog and parallel tests never see any of it.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
with_dev_log=$(cd "$(dirname "$0")" && pwd)/with_dev_log.sh

work=$(mktemp -d /tmp/caretz-syslog.XXXXXX)
chmod 0755 "$work"
own_home
rsyslogd_pid=
stuck_pid=
cleanup() {
    end_tmux
    [[ -n $rsyslogd_pid ]] && kill "$rsyslogd_pid" 2>/dev/null
    [[ -n $stuck_pid ]] && kill "$stuck_pid" 2>/dev/null
    rm -rf "$work" "$TEST_HOME"
}
trap cleanup EXIT

ws=$TEST_HOME/ws
u mkdir -p "$ws" "$TEST_HOME/.ssh" "$TEST_HOME/.config/caretz"
u touch "$TEST_HOME/.ssh/known_hosts-$$"
audit=$TEST_HOME/.local/state/caretz/audit.jsonl
set_config() { echo "$1" | u tee "$TEST_HOME/.config/caretz/config.json" >/dev/null; }

# rsyslogd writes authpriv to one file and everything else to another, each line as
# "facility.severity tag message". It passes control characters through as they come, so a
# newline Caretz failed to escape would split its line in the file.
mkdir "$work/spool"
cat >"$work/rsyslog.conf" <<EOF
global(workDirectory="$work/spool" parser.escapeControlCharactersOnReceive="off")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="$work/log.sock" CreatePath="on")
template(name="plain" type="string"
         string="%syslogfacility-text%.%syslogseverity-text% %syslogtag%%msg%\n")
authpriv.* action(type="omfile" file="$work/authpriv.log" template="plain")
*.*;authpriv.none action(type="omfile" file="$work/other.log" template="plain")
EOF
rsyslogd -n -f "$work/rsyslog.conf" -i "$work/rsyslogd.pid" 2>"$work/rsyslogd.err" &
rsyslogd_pid=$!
for _ in $(seq 300); do [[ -S $work/log.sock ]] && break; sleep 0.1; done
if [[ ! -S $work/log.sock ]]; then
    fail "rsyslogd starts with the test's config" "$(cat "$work/rsyslogd.err")"
    finish
    exit
fi

# A command whose text holds an escape sequence and a newline followed by what would pass
# for a line of its own; its last line reads a hidden path, so the sandbox refuses it.
forged="caretz[1]: event=offer decision=deny"
command=$'echo \e[8m'"$forged"$'\nls ~/.ssh'
shown='"echo \e[8m'"$forged"'\nls ~/.ssh"'

# offer_in_pane SOCKET: `caretz exec` of the command in tmux with /dev/log bound to SOCKET;
# answers the offer with o and waits for the rerun to end.
offer_in_pane() {
    start_pane "$with_dev_log $1 $(user_command_line /bin/bash "$ws" "$E2E_BIN --ask-sandbox-off exec $(printf %q "$command"); echo CARETZ-EXITED; sleep 600")"
    wait_for_screen "Allow once" 60 && tmux_ send-keys -t main o && wait_for_screen CARETZ-EXITED 60
}
# wait_for_log PATTERN: waits until rsyslogd has written a line matching PATTERN.
wait_for_log() {
    for _ in $(seq 300); do
        grep -q -- "$1" "$work/authpriv.log" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
lacks() { ! grep -qs -- "$1" "$2"; }
lacks_control() { ! grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$1"; }
# The JSONL lines of the newest session, as "event:decision".
newest_session_events() {
    python3 - "$audit" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
session = lines[-1]["session"]
print(" ".join(l["event"] + ":" + l.get("decision", "-") for l in lines if l["session"] == session))
PY
}

# 1. Off by default: the same offer sends nothing to syslog.
set_config '{}'
check "without audit.syslog, the offer is answered" offer_in_pane "$work/log.sock"
check "... the rerun ran outside: the hidden folder was listed" wait_for_screen "known_hosts-$$" 1
check "... and the JSONL file has the decision" \
    test "$(newest_session_events)" = "offer:allow_once rerun_finished:-"
# Caretz ended before the marker was sent, so a line of its own would be in the file by then.
logger --socket "$work/log.sock" -p authpriv.info -t caretz-e2e-marker "after the unset run"
wait_for_log caretz-e2e-marker
check "... but syslog got no line from Caretz" lacks "caretz\[" "$work/authpriv.log"

# 2. On: the decision and the rerun's end reach rsyslogd.
set_config '{"audit": {"syslog": true}}'
check "with audit.syslog, the offer is answered" offer_in_pane "$work/log.sock"
check "... and the rerun ran outside" wait_for_screen "known_hosts-$$" 1
check "rsyslogd wrote the rerun's end" wait_for_log "caretz\[[0-9]*\]: event=rerun_finished"
decision_line=$(grep "event=offer decision=allow_once" "$work/authpriv.log")
rerun_line=$(grep "event=rerun_finished" "$work/authpriv.log")
check "the decision line has ident caretz, facility authpriv and the user" \
    contains "$decision_line" "authpriv.notice caretz["
check "... names the user, what the attempt changed (nothing), the refusal and the cwd" \
    contains "$decision_line" "user=$E2E_USER changed=0 cwd=$ws refusals=hidden:$TEST_HOME/.ssh session="
check "... and ends with the command escaped" test "${decision_line##* command=}" = "$shown"
check "the rerun's line has its exit status and the command" \
    contains "$rerun_line" "rerun_exit=0 session="
check "... escaped too" test "${rerun_line##* command=}" = "$shown"
# runuser's PAM session logs to authpriv too; every line, theirs and Caretz's, starts with
# the facility, while a newline let through would start a line with the command's rest.
check "the command made no line of its own" \
    test "$(grep -vc '^authpriv\.[a-z]* ' "$work/authpriv.log")" = 0
check "... and one offer starts a line" \
    test "$(grep -c '^authpriv\.notice caretz\[[0-9]*\]: event=offer' "$work/authpriv.log")" = 1
check "... no control character reached the file" lacks_control "$work/authpriv.log"
check "nothing of Caretz went to another facility" lacks "caretz\[" "$work/other.log"
check "the JSONL file has the same two events" \
    test "$(newest_session_events)" = "offer:allow_once rerun_finished:-"
session=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["session"])' "$audit")
check "... in the session syslog names" contains "$decision_line" "session=$session"

# 2b. The REPL: Allow for session, then the same command again runs on the allowance, and
# syslog gets that use too.
start_pane "$with_dev_log $work/log.sock $(user_command_line /bin/bash "$ws" "$E2E_BIN --ask-sandbox-off; echo CARETZ-EXITED; sleep 600")"
wait_for_prompt caretz\> 60
type_line '!ls ~/.ssh'
check "in the REPL, the offer is answered with s" wait_for_screen "Allow once" 60
tmux_ send-keys -t main s
wait_for_count "known_hosts-$$" 0 60
type_line '!ls ~/.ssh'
check "... and the same command runs again on the allowance" wait_for_count "known_hosts-$$" 1 60
check "rsyslogd wrote the use of the allowance" \
    wait_for_log 'event=offer decision=session_allowance .* command="ls ~/.ssh"$'
check "... after the decision that made it" \
    grep -q 'event=offer decision=allow_session .* command="ls ~/.ssh"$' "$work/authpriv.log"
tmux_ send-keys -t main C-d

# 2c. Stuck: a syslog daemon that stopped reading, its socket's queue full. syslog(3) would wait
# for it; the decision and the rerun must not. setpriv starts the user's Caretz, since runuser's
# PAM session would log to the stuck socket first and wait there itself.
python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
c.connect(sys.argv[1])
try:
    while True:
        c.send(b"<86>filler: a line the daemon never reads", socket.MSG_DONTWAIT)
except BlockingIOError:
    pass
open(sys.argv[2], "w").close()
time.sleep(600)' "$work/stuck.sock" "$work/stuck.full" &
stuck_pid=$!
for _ in $(seq 300); do [[ -e $work/stuck.full ]] && break; sleep 0.1; done
user_line=$(user_command_line /bin/bash "$ws" "$E2E_BIN --ask-sandbox-off exec $(printf %q "$command"); echo CARETZ-EXITED; sleep 600")
start_pane "$with_dev_log $work/stuck.sock ${user_line/#runuser -u $E2E_USER --/setpriv --reuid=$E2E_USER --regid=$E2E_USER --init-groups}"
check "with syslog stuck, the offer is still shown" wait_for_screen "Allow once" 60
tmux_ send-keys -t main o
check "... the rerun still runs outside" wait_for_screen "known_hosts-$$" 30
check "... Caretz still ends" wait_for_screen CARETZ-EXITED 30
check "... and the JSONL file has the decision and the rerun's end" \
    test "$(newest_session_events)" = "offer:allow_once rerun_finished:-"
kill "$stuck_pid"

# 3. Unreachable: rsyslogd is gone and /dev/log is a socket nobody listens on.
kill "$rsyslogd_pid"
wait "$rsyslogd_pid"
rsyslogd_pid=
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' \
    "$work/dead.sock"
lines_before=$(wc -l <"$audit")
check "with syslog unreachable, the offer is still answered" offer_in_pane "$work/dead.sock"
check "... the rerun still ran outside" wait_for_screen "known_hosts-$$" 1
check "... and the JSONL file has its decision and its end" \
    test "$(newest_session_events)" = "offer:allow_once rerun_finished:-"
check "... as two new lines" test "$(wc -l <"$audit")" = $((lines_before + 2))

finish
