#!/usr/bin/env bash
# The session's terminal in utmp, as the unprivileged test user in tmux: Caretz opens the session
# shell's PTY on the host and records it with libutempter, so `who` lists that terminal (for the
# user, from "caretz") while Caretz runs, and no longer once Caretz ends, by Ctrl-D, SIGTERM or
# SIGHUP; `caretz doctor` reports the record. A machine without a utmp file gets one first, as
# Debian makes it (root:utmp, 0664).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
[[ -e /var/run/utmp ]] || install -o root -g utmp -m 0664 /dev/null /var/run/utmp
own_home
ws=$(new_workspace)
modes="$TEST_HOME/stty-$$"
trap 'end_tmux; rm -rf "$ws" "$modes".*' EXIT

# session_line: the terminal (pts/N) of a process below this pane's Caretz that has one other
# than the pane's own: the session shell's.
session_line() {
    local pane_tty p line
    pane_tty=$(tmux_ display-message -p -t main '#{pane_tty}')
    for p in $(descendants "$(caretz_pid)"); do
        line=$(ps -o tty= -p "$p" 2>/dev/null | tr -d ' ')
        [[ -n $line && $line != "?" && /dev/$line != "$pane_tty" ]] && { echo "$line"; return; }
    done
}
# who_lists LINE: `who` lists the test user on LINE, from "caretz".
who_lists() { who | grep -qE "^$E2E_USER +$1 .*\(caretz\)$"; }
# unlisted LINE: who stops listing LINE within 2 s.
unlisted() {
    for _ in $(seq 20); do
        who_lists "$1" || return 0
        sleep 0.1
    done
    return 1
}

for end in Ctrl-D TERM HUP; do
    start_caretz_pane "$ws"
    type_line "!echo started-by-$end"
    wait_for_screen "started-by-$end" 10
    wait_for_prompt
    line=$(session_line)
    check "$end: the session shell runs on a terminal Caretz opened on the host (${line:-none})" \
        test -n "$line"
    check "... who lists it for the user, from caretz, while Caretz runs" who_lists "$line"
    echo "     who says: $(who | grep " $line " | tr -s ' ')"
    if [[ $end == Ctrl-D ]]; then
        tmux_ send-keys -t main C-d
    else
        kill -"$end" "$(caretz_pid)"
    fi
    check "... Caretz ends" wait_for_screen CARETZ-EXITED 10
    check "... and who lists it no longer" unlisted "$line"
    end_tmux
done

caretz_as_user /bin/bash "$ws" doctor
check "caretz doctor reports the record" \
    grep -q "^ok       libutempter: a session's terminal is recorded in /var/run/utmp while Caretz runs, so who and w list it (pts/[0-9]* was recorded and removed)" <<<"$OUT"

finish
