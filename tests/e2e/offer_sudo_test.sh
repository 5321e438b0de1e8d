#!/usr/bin/env bash
# sudo run by a script is seen (DESIGN.md section 5): Caretz's stand-in over sudo records each
# run inside the sandbox, so `./deploy.sh`, which runs `sudo -n true` twice and exits 0, opens
# the offer naming both sudo command lines; a grep through logs holding sudo's refusal line and
# a script that only prints it ask nothing. In tmux, as the unprivileged test user.
# Argument: session (the default) or fresh (--no-session).
set -uo pipefail
source "$(dirname "$0")/lib.sh"

MODE=${1:-session}
FLAGS=()
[[ $MODE == fresh ]] && FLAGS=(--no-session)

own_home
ws=$(new_workspace)
audit="$TEST_HOME/.local/state/caretz/audit.jsonl"
cleanup() {
    end_tmux
    rm -rf "$ws"
}
trap cleanup EXIT

runuser -u "$E2E_USER" -- bash -c "cd '$ws' &&
    printf '#!/bin/sh\nsudo -n true\nsudo -n true\necho deploy finished\n' > deploy.sh &&
    printf '#!/bin/sh\necho \"sudo: The \\\\\"no new privileges\\\\\" flag is set, which prevents sudo from running as root.\"\n' > pretend.sh &&
    chmod +x deploy.sh pretend.sh && mkdir logs && ./pretend.sh > logs/ci.log"
check "the fixture prints sudo's refusal line" grep -q '"no new privileges" flag' "$ws/logs/ci.log"

start_pane "$(user_command_line /bin/bash "$ws" "$E2E_BIN --ask-sandbox-off ${FLAGS[*]}; echo CARETZ-EXITED; sleep 600")"
wait_for_screen "caretz>" 10
caretz=$(caretz_pid)

offers_shown() { count_lines "Allow once"; }

offers=$(offers_shown)
type_command ./deploy.sh
check "a script that runs sudo opens the offer" wait_for_count "Allow once" "$offers" 15
check "... naming the sudo command line it ran, twice" \
    test "$(count_lines '^  sudo: sudo -n true$')" -eq 2
check "... saying the command ran it, and where" \
    test "$(count_lines "(run by the command in $ws)")" -eq 2
check "... with sudo's own refusal line as evidence" wait_for_screen '"no new privileges" flag is set' 1
check "... after the script's own output" wait_for_screen "deploy finished" 1
tmux_ send-keys -t main Enter
prompt_back

check "the audit line names both runs" python3 - "$audit" "$ws" <<'PY'
import json, sys
path, ws = sys.argv[1], sys.argv[2]
offers = [json.loads(l) for l in open(path) if '"event":"offer"' in l]
mine = [o for o in offers if o["command"] == "./deploy.sh" and o["cwd"] == ws]
runs = [r for r in mine[-1]["refusals"] if r["kind"] == "sudo"]
assert [r["subject"] for r in runs] == ["sudo -n true"] * 2, runs
assert all(r["origin"] == "run by the command in " + ws for r in runs), runs
PY

offers=$(offers_shown)
type_command 'grep -r "no new privileges" logs/'
prompt_back
check "grep through logs holding sudo's refusal line asks nothing" test "$(offers_shown)" -eq "$offers"
check "... and its output is there" wait_for_screen 'logs/ci.log:sudo: The "no new privileges"' 1

type_command ./pretend.sh
prompt_back
check "a script that only prints sudo's refusal line asks nothing" test "$(offers_shown)" -eq "$offers"

type_command 'sudo -n true; echo "sudo-exit=$?"'
check "sudo typed directly still asks" wait_for_count "Allow once" "$offers" 15
check "... with sudo's own exit status kept" wait_for_screen "sudo-exit=1" 1
tmux_ send-keys -t main Enter
prompt_back

# The stand-in keeps sudo's output and status exactly: the same as the real sudo's, which it
# keeps read-only under /.caretz/real/sudo. Captured, so no refusal line shows and nothing asks.
type_command 'real=/.caretz/real/sudo$(readlink -f "$(command -v sudo)"); a=$(sudo -n true 2>&1; echo "status $?"); b=$($real -n true 2>&1; echo "status $?"); [ "$a" = "$b" ] && [ -n "$a" ] && echo "SAME AS"" SUDO"'
prompt_back
check "sudo's output and status pass through the stand-in unchanged" wait_for_screen "SAME AS SUDO" 5
check "... and nothing asked" test "$(offers_shown)" -eq "$((offers + 1))"

tmux_ send-keys -t main C-d
wait_for_screen CARETZ-EXITED 10
# The records folder is named by the pid of the Caretz that made it (run_watch.cpp).
check "no records file of this run is left on the host" \
    eval '[[ -n $caretz && -z $(find /tmp "/run/user/$(id -u "$E2E_USER")" -maxdepth 1 -name "caretz-runs-$caretz-*" 2>/dev/null) ]]'

# Without a terminal nobody is asked, but the refusal is still seen and said on stderr.
caretz_as_user /bin/bash "$ws" exec "${FLAGS[@]}" --json ./deploy.sh
check "caretz exec reports both runs of the script's sudo" python3 -c '
import json, sys
out = sys.argv[1]
result = json.loads(out[out.index("{"):])
subjects = [r["subject"] for r in result["refusals"] if r["kind"] == "sudo"]
assert subjects == ["sudo -n true"] * 2, subjects
' "$OUT"

finish
