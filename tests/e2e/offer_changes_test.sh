#!/usr/bin/env bash
# The offer lists what the sandboxed attempt already changed in the workspace, as the
# unprivileged test user meets it in tmux with --ask-sandbox-off (MODE: session, or fresh for
# --no-session): made, removed and renamed files, what a background child wrote before the
# command ended, nothing at all, and 5,000 files (ten named, the rest counted). `caretz exec
# --json` carries the same list, and the audit line its count and first paths.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-session}"

own_home
ws=$(new_workspace)
outside=$(runuser -u "$E2E_USER" -- mktemp -d "$TEST_HOME/outside.XXXXXXXX")
audit="$TEST_HOME/.local/state/caretz/audit.jsonl"
trap 'end_tmux; rm -rf "$ws" "$outside" "${ws2:-}"' EXIT

runuser -u "$E2E_USER" -- sh -c "cd '$ws' && printf c > c.txt && printf d > d.txt && \
    printf 'printf a > a.txt; printf b > b.txt; rm c.txt; mv d.txt e.txt; touch %s/script\n' \
    '$outside' > change.sh"

# The last offer's lines from "The sandboxed attempt" to the question after them (without the
# last line end).
offer_changes() {
    whole_screen | awk '/^The sandboxed attempt/ { block = ""; on = 1 }
        on && /^Run it again OUTSIDE/ { on = 0; last = block }
        on { block = block $0 "\n" }
        END { printf "%s", last }'
}

start_pane "$(user_command_line /bin/bash "$ws" "$E2E_BIN --ask-sandbox-off ${MODE[*]}; echo CARETZ-EXITED; sleep 600")"
wait_for_screen "caretz>" 10

check "a script that changes the workspace and then writes outside asks" ask "sh change.sh"
expected="The sandboxed attempt already changed 4 files in the workspace:
    created  a.txt
    created  b.txt
    deleted  c.txt
    renamed  d.txt -> e.txt"
check "... listing exactly what it changed, shortest first" test "$(offer_changes)" == "$expected"
[[ "$(offer_changes)" == "$expected" ]] || offer_changes
tmux_ send-keys -t main d
prompt_back
check "Deny leaves the sandboxed attempt's changes as they are" \
    test -e "$ws/a.txt" -a -e "$ws/e.txt" -a ! -e "$ws/c.txt" -a ! -e "$ws/d.txt"
check "the audit line has the count and the first paths" \
    grep -qF "\"changed\":4,\"changed_first\":[\"created $ws/a.txt\",\"created $ws/b.txt\",\"deleted $ws/c.txt\",\"renamed $ws/d.txt -> $ws/e.txt\"]" \
    <(grep -F '"command":"sh change.sh"' "$audit")

check "a command that changes nothing asks" ask "touch $outside/nothing"
check "... and says it changed nothing" \
    test "$(offer_changes)" == "The sandboxed attempt already ran. It changed nothing in the workspace."
tmux_ send-keys -t main Enter
prompt_back

check "a command whose background child writes before it ends asks" \
    ask "sh -c 'printf bg > child.txt' & sleep 0.5; touch $outside/child"
check "... listing what the child wrote" contains "$(offer_changes)" "    created  child.txt"
tmux_ send-keys -t main Enter
prompt_back

check "a command that writes 5,000 files asks" \
    ask "mkdir many && for i in \$(seq 5000); do : > many/f\$i; done; touch $outside/many" 30
expected="The sandboxed attempt already changed 5,001 files in the workspace:
    created  many/
    created  many/f1
    created  many/f2
    created  many/f3
    created  many/f4
    created  many/f5
    created  many/f6
    created  many/f7
    created  many/f8
    created  many/f9
    and 4,991 more"
check "... naming the ten shortest and counting the rest" test "$(offer_changes)" == "$expected"
[[ "$(offer_changes)" == "$expected" ]] || offer_changes
tmux_ send-keys -t main Enter
prompt_back

check "5,000 files written at the top show ten and 4,990 more" \
    ask "for i in \$(seq 5000); do : > g\$i; done; touch $outside/top" 30
changes=$(offer_changes)
check "... the count" contains "$changes" "already changed 5,000 files in the workspace:"
check "... g1 to g9 and g10" test "$(grep -c '^    created  g[0-9]*$' <<<"$changes")" -eq 10
check "... and 4,990 more" contains "$changes" "    and 4,990 more"
tmux_ send-keys -t main Enter
prompt_back
tmux_ send-keys -t main C-d
check "Ctrl-D leaves Caretz" wait_for_screen "CARETZ-EXITED" 5

# caretz exec --json: with nobody to ask, the list goes with the result. The same script, in a
# workspace as the first one was, and then another.
ws2=$(new_workspace)
runuser -u "$E2E_USER" -- sh -c "cd '$ws2' && printf c > c.txt && printf d > d.txt && cp '$ws/change.sh' ."
json=$(as_user /bin/bash "$ws2" "$E2E_BIN" exec "${MODE[@]}" --ask-sandbox-off --json "sh change.sh" \
    2>/dev/null </dev/null)
check "exec --json reports exactly what the script changed" test "$(python3 -c '
import json, sys
ch = json.loads(sys.argv[1])["changed"]
print(ch["count"], " ".join(c["change"] + ":" + c["path"] + ":" + c.get("from", "") for c in ch["paths"]))' "$json")" == \
    "4 created:$ws2/a.txt: created:$ws2/b.txt: deleted:$ws2/c.txt: renamed:$ws2/e.txt:$ws2/d.txt"
rm -rf "$ws2"
json=$(as_user /bin/bash "$ws" "$E2E_BIN" exec "${MODE[@]}" --ask-sandbox-off --json \
    "printf j > j.txt; rm a.txt; mv b.txt bee.txt; touch $outside/json" 2>/dev/null </dev/null)
check "... and another command's, with the decision nobody_to_ask" test "$(python3 -c '
import json, sys
out = json.loads(sys.argv[1])
ch = out["changed"]
print(out["decision"], ch["count"], " ".join(
    c["change"] + ":" + c["path"].rsplit("/", 1)[1] + (":" + c["from"].rsplit("/", 1)[1] if "from" in c else "")
    for c in ch["paths"]), "incomplete" in ch)' "$json")" == \
    "nobody_to_ask 3 deleted:a.txt created:j.txt renamed:bee.txt:b.txt False"
json=$(as_user /bin/bash "$ws" "$E2E_BIN" exec "${MODE[@]}" --json "true" 2>/dev/null </dev/null)
check "... and null where no offer could follow (no --ask-sandbox-off)" \
    test "$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["changed"])' "$json")" == None

finish
