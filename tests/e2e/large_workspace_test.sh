#!/usr/bin/env bash
# A large workspace, as the unprivileged test user: 300,000 folders and a repository 12
# folders down whose hooks folder is missing. Caretz searches all of it at the start, never
# gives up, protects that repository's hooks, and the search costs little: `caretz exec true`
# there uses little more processor time than `find` takes to list the same folders (bench/
# measures the figures). The REPL shows its prompt while it searches; its first command waits.
# The folders are made once, in a folder of the test's own, and removed at the end.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
SH=/bin/bash
FOLDERS=300000
# The yardstick is `find -type d` over the same folders, timed here on the same machine: one
# `caretz exec` searches at the start and looks again after the command, so it may use at most
# three times find's processor time more than in an empty folder.
LIMIT_TIMES_FIND=3

own_home
trap 'rm -rf "$TEST_HOME"' EXIT
ws="$TEST_HOME/ws"
deep="$ws/a/b/c/d/e/f/g/h/i/j/k/repo"  # the repository's folder, 12 folders down
host_git() {
    local dir=$1
    shift
    as_user "$SH" "$dir" git -c user.name=e2e -c user.email=e2e@example.invalid "$@"
}

runuser -u "$E2E_USER" -- python3 - "$ws" "$FOLDERS" <<'PY'
import os, sys
ws, total = sys.argv[1], int(sys.argv[2])
os.makedirs(ws)
made = 0
for i in range(600):  # build/t000 .. t599, each with 499 folders: 300,000 in all
    top = os.path.join(ws, "build", "t%03d" % i)
    os.makedirs(top)
    made += 1
    for j in range(total // 600 - 1):
        os.mkdir(os.path.join(top, "o%03d" % j))
        made += 1
print(made, "folders")
PY
runuser -u "$E2E_USER" -- mkdir -p "$deep"
host_git "$deep" init -q . && host_git "$deep" commit -q --allow-empty -m init
rm -rf "$deep/.git/hooks"
check "the workspace holds $FOLDERS folders and more" \
    test "$(find "$ws" -type d | wc -l)" -gt "$FOLDERS"

find_ms=$(as_user "$SH" "$ws" /usr/bin/time -f 'cpu %U %S' find . -type d -printf '' 2>&1 |
    awk '/^cpu/ { printf "%d", ($2 + $3) * 1000 }')
echo "     find -type d over the workspace used $find_ms ms of processor time"
empty="$TEST_HOME/empty"
runuser -u "$E2E_USER" -- mkdir -p "$empty"
# timed SHELL DIR ARGS...: Caretz with ARGS as the user, like caretz_as_user (OUT, RC), and
# MS, its wall time, and CPU_MS, the processor time it and its children used. The check is on
# processor time, which other tests loading the machine do not inflate as they do wall time.
timed() {
    local shell=$1 dir=$2 t0=${EPOCHREALTIME/./}
    shift 2
    OUT=$(as_user "$shell" "$dir" /usr/bin/time -f 'cpu %U %S' -o "$TEST_HOME/time.txt" \
        "$E2E_BIN" "$@" 2>&1 </dev/null)
    RC=$?
    MS=$(((${EPOCHREALTIME/./} - t0) / 1000))
    CPU_MS=$(awk '/^cpu/ { printf "%d", ($2 + $3) * 1000 }' "$TEST_HOME/time.txt")
}

for mode in session fresh; do
    flags=()
    [[ $mode == fresh ]] && flags=(--no-session)
    timed "$SH" "$empty" exec "${flags[@]}" true
    base=$CPU_MS base_wall=$MS
    timed "$SH" "$ws" exec "${flags[@]}" true
    echo "     $mode: caretz exec true used $base ms of processor time ($base_wall ms wall) in" \
        "an empty folder, $CPU_MS ms ($MS ms wall) here"
    check "$mode: the search adds less than $LIMIT_TIMES_FIND times find's processor time" \
        test $((CPU_MS - base)) -lt $((LIMIT_TIMES_FIND * find_ms))
    check "$mode: ... and Caretz does not give up on it" not_contains "$OUT" "too large"

    caretz_as_user "$SH" "$ws" exec "${flags[@]}" \
        "mkdir -p $deep/.git/hooks; printf '#!/bin/sh\ntouch PWNED\n' > $deep/.git/hooks/pre-commit && chmod +x $deep/.git/hooks/pre-commit && echo planted"
    check "$mode: the deep repository's hooks cannot be planted" not_contains "$OUT" "planted"
    check "$mode: ... refused as read-only" contains_nocase "$OUT" "Read-only file system"
    host_git "$deep" commit -q --allow-empty -m "after the sandbox"
    check "$mode: ... and git commit on the host runs nothing" test ! -e "$deep/PWNED"
done

# --- the REPL: its prompt does not wait for the search, its first command does ----------------
rm -rf "$deep/.git/hooks"
phases="$TEST_HOME/phases"
E2E_ENV=(CARETZ_PHASE_TIMES="$phases")
start_pane "$(user_command_line "$SH" "$ws" "$E2E_BIN; echo CARETZ-EXITED; sleep 600")"
wait_for_screen "caretz>" 20
# The search takes most of a second here; the prompt waits a tenth of one at most.
check "the REPL: its prompt is up before the search of $FOLDERS folders ends" \
    not grep -q "repository search" "$phases"
type_command "mkdir -p $deep/.git/hooks; printf '#!/bin/sh\ntouch PWNED\n' > $deep/.git/hooks/pre-commit && echo pla''nted"
prompt_back 60
check "... a command typed at once waits for it: the deep repository's hooks cannot be planted" \
    not_contains "$(whole_screen)" "planted"
check "... refused as read-only" contains_nocase "$(whole_screen)" "Read-only file system"
check "... the search did end" grep -q "repository search" "$phases"
host_git "$deep" commit -q --allow-empty -m "after the REPL"
check "... and git commit on the host runs nothing" test ! -e "$deep/PWNED"

finish
