#!/usr/bin/env bash
# The REPL on a real terminal (tmux), as the unprivileged test user: `!` commands show their
# output live, follow the window size, read the user's keys, stop on Ctrl-C without leaving
# Caretz; the terminal's modes come back after Ctrl-D, SIGTERM and SIGHUP, and no sandbox
# process outlives Caretz. $1 = session (default), or fresh for --no-session, where each
# command gets a sandbox and a PTY of its own.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
MODE=
[[ ${1:-session} == fresh ]] && MODE=--no-session

own_home
ws=$(new_workspace)
modes="$TEST_HOME/stty-$$"
trap 'end_tmux; rm -rf "$ws" "$modes".* "$TEST_HOME/raw-"*' EXIT

run_in_pane() { start_caretz_pane "$ws" $MODE; }
# Types a line at Caretz's prompt once the prompt is back, as a person watching would: keys
# typed while the last command is still ending go to that command.
prompt_line() {
    wait_for_prompt
    type_line "$1"
}

raw="$TEST_HOME/raw-$$"
# raw_between FROM TO: the pane's raw bytes from the first FROM to the first TO after it, both
# included, as a Python bytes literal (so a '\r' shows).
raw_between() {
    python3 - "$raw" "$1" "$2" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
start = data.find(sys.argv[2].encode())
end = data.find(sys.argv[3].encode(), start + 1) if start >= 0 else -1
print(repr(data[start:end + len(sys.argv[3])]) if start >= 0 and end >= 0 else "not found")
PY
}
# wait_for_raw TEXT: waits until the recorded bytes hold TEXT (tmux's cat writes them to the file
# a moment after the screen shows them).
wait_for_raw() {
    local deadline=$((SECONDS + 10))
    while ((SECONDS < deadline)); do
        grep -qaF -- "$1" "$raw" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
# recorded_exec ARGS: `caretz exec ARGS` in a new pane whose bytes are recorded from before it
# starts (it waits for the recording), then until EXEC-DONE is on the screen and in the record.
recorded_exec() {
    rm -f "$raw" "$raw.go"
    start_pane "$(user_command_line /bin/bash "$ws" "while [ ! -e $raw.go ]; do sleep 0.05; done; $E2E_BIN exec $*; echo EXEC-DONE; sleep 600")"
    tmux_ pipe-pane -o -t main "cat >> $raw"
    touch "$raw.go"
    wait_for_screen "EXEC-DONE" 20 && wait_for_raw "EXEC-DONE"
}

run_in_pane
# What reaches the terminal, byte for byte: the command's own terminal turned each '\n' into
# "\r\n" already, so Caretz must not let the user's terminal add a second '\r'.
tmux_ pipe-pane -o -t main "cat >> $raw"
prompt_line '!printf "%s-A\n%s-B\n" bytes bytes'
wait_for_screen "bytes-B" 5 && wait_for_raw "bytes-B"
check "a command's output reaches the terminal byte for byte: one \\r\\n a line" \
    test "$(raw_between 'bytes-A' 'bytes-B')" = "b'bytes-A\\r\\nbytes-B'"
check "... and nowhere \\r\\r\\n" not grep -qaP '\r\r$' "$raw"
prompt_line '!echo hi-from-the-sandbox'
check "!echo shows its output" wait_for_screen "hi-from-the-sandbox" 5
# Output that does not end its line (kubectl's jsonpath, printf) is not drawn over by the
# prompt: a '%' marks where it stopped, as in zsh, and the prompt comes on the line below.
prompt_line '!printf no-newline-"$((6*7))"'
check "output without a final newline stays on the screen, marked, the prompt below it" \
    wait_for_screen $'no-newline-42%\ncaretz>' 5
prompt_line '!printf half-a-line; false'
check "... and the exit status comes on a line of its own" \
    wait_for_screen $'half-a-line%\n[exit 1]' 5

tmux_ resize-window -t main -x 97 -y 31
sleep 0.3
prompt_line '!tput cols; tput lines'
check "a resized window reaches the command (tput cols)" wait_for_screen $'97\n31' 5

# Each command shows a prompt first, spelled so that the typed command line does not show it,
# so the keys are typed only once the command runs.
prompt_line '!read -r -p "s""ay> " x; echo "got=$x"'
wait_for_screen "say> " 15
type_line 'typed-by-the-user'
check "the user's keys reach a command that reads stdin" wait_for_screen "got=typed-by-the-user" 5

prompt_line "!python3 -c 'print(input(\"rev\" \"erse> \")[::-1])'"
wait_for_screen "reverse> " 15
type_line 'olleh'
check "an interactive program gets the keys too" wait_for_screen $'\nhello' 15

# A line typed while a command runs that it does not read runs at the next prompt, as in a
# shell; in fresh mode too, where the command's terminal ends with it.
prompt_line '!sleep 2'
command_pid 'sleep 2' >/dev/null
type_line '!echo typed-while-sleeping | tr a-z A-Z'
check "a line typed ahead during a command runs at the next prompt" \
    wait_for_screen $'\nTYPED-WHILE-SLEEPING' 10

prompt_line '!echo sleeping; sleep 30'
wait_for_screen $'\nsleeping' 5
# A Ctrl-C that lands while bash is still forking `sleep` is lost, in any terminal: press it
# once `sleep` runs, as a person watching the screen would.
command_pid 'sleep 30' >/dev/null
sleep 0.3
tmux_ send-keys -t main C-c
check "Ctrl-C interrupts the command with status 130" wait_for_screen "[exit 130]" 5
prompt_line '!echo after-ctrl-c-$((6*7))'
check "... and Caretz goes on" wait_for_screen "after-ctrl-c-42" 5

sandbox=$(pgrep -P "$(caretz_pid)" -x bwrap | head -1)
wait_for_prompt
tmux_ send-keys -t main C-d
check "Ctrl-D leaves Caretz" wait_for_screen "CARETZ-EXITED" 5
check "... and the terminal's modes are as before" modes_restored
[[ -n $MODE ]] || check "... and the sandbox is gone" gone "$sandbox"

for signal in TERM HUP; do
    rm -f "$modes".*
    run_in_pane
    prompt_line '!echo warm-$((6*7))'
    wait_for_screen "warm-42" 5
    # A command that runs when the signal comes: its sandbox must go too.
    prompt_line '!sleep 300'
    command=$(command_pid 'sleep 300')
    pid=$(caretz_pid)
    sandbox=$(pgrep -P "$pid" -x bwrap | head -1)
    check "a sandbox runs the command" test -n "$sandbox" -a -n "$command"
    kill "-$signal" "$pid"
    check "after SIG$signal Caretz is gone" wait_for_screen "CARETZ-EXITED" 5
    check "... the terminal's modes are restored" modes_restored
    check "... and no sandbox process survives" gone "$sandbox"
    check "... nor the command" gone "$command"
done

# `caretz exec` on a terminal: its output arrives byte for byte as well.
recorded_exec "$MODE 'printf \"%s-A\\n%s-B\\n\" exec exec'"
check "caretz exec on a terminal: each line ends in one \\r\\n" \
    test "$(raw_between 'exec-A' 'exec-B')" = "b'exec-A\\r\\nexec-B'"
# Its stdin no terminal, its stdout one: Caretz does not own that terminal, which then adds
# the '\r' itself, once.
recorded_exec "$MODE 'printf \"%s-A\\n%s-B\\n\" in in' </dev/null"
check "... and with stdin from /dev/null" \
    test "$(raw_between 'in-A' 'in-B')" = "b'in-A\\r\\nin-B'"

# The terminal itself goes away (the window closed) while a command runs, under a session
# leader that passes no SIGHUP on (runuser): Caretz notices, and nothing of it stays.
rm -f "$modes".*
run_in_pane
prompt_line '!sleep 300'
command=$(command_pid 'sleep 300')
pid=$(caretz_pid)
sandbox=$(pgrep -P "$pid" -x bwrap | head -1)
check "a sandbox runs the command" test -n "$sandbox" -a -n "$command"
panes=$(tmux_ list-panes -a -F '#{pane_pid}')
tmux_ kill-server
check "the terminal gone: Caretz ends" gone "$pid"
check "... and its sandbox" gone "$sandbox"
check "... and the command" gone "$command"
# shellcheck disable=SC2086  # one pid a word
kill_left_in_panes $panes  # runuser, and what it would run after Caretz

# Caretz's binaries replaced while it runs, as an upgrade replaces them (new files renamed
# over the old ones): the next sandbox still starts, with the build that runs.
prefix="$TEST_HOME/caretz-copy-$$"
bin_copy="$prefix/bin/caretz"
inside_copy="$prefix/libexec/caretz/caretz-inside"
inside="$(dirname "$E2E_BIN")/../libexec/caretz/caretz-inside"
runuser -u "$E2E_USER" -- mkdir -p "$prefix/bin" "$prefix/libexec/caretz"
install -o "$E2E_USER" -m 0755 "$E2E_BIN" "$bin_copy"
install -o "$E2E_USER" -m 0755 "$inside" "$inside_copy"
fifo="$TEST_HOME/upgrade-in-$$"
runuser -u "$E2E_USER" -- mkfifo "$fifo"
as_user /bin/bash "$ws" bash -c "exec \"\$1\" $MODE <\"\$2\" >\"\$3\" 2>&1" _ \
    "$bin_copy" "$fifo" "$TEST_HOME/upgrade-out" &
repl=$!
exec 8>"$fifo"
copy_pid=
for _ in $(seq 50); do
    copy_pid=$(pgrep -u "$E2E_USER" -f -x "$bin_copy.*" | head -1)
    [[ $(readlink "/proc/$copy_pid/exe" 2>/dev/null) == "$bin_copy" ]] && break
    sleep 0.1
done
install -o "$E2E_USER" -m 0755 "$E2E_BIN" "$bin_copy.new"
install -o "$E2E_USER" -m 0755 "$inside" "$inside_copy.new"
mv -f "$bin_copy.new" "$bin_copy"
mv -f "$inside_copy.new" "$inside_copy"
echo '!echo after-the-upgrade-$((6*7))' >&8
exec 8>&-
wait "$repl"
check "after its binary was replaced, Caretz still starts a sandbox" \
    contains "$(cat "$TEST_HOME/upgrade-out")" "after-the-upgrade-42"
# Its own copy only (the folder is named by its pid): a test running beside this one, as the
# same user, may be at the same step.
check "... and removes the copy it made for it when it ends" \
    eval '[[ -n $copy_pid && -z $(find /tmp "/run/user/$(id -u "$E2E_USER")" -maxdepth 1 -name "caretz-exe-$copy_pid-*" 2>/dev/null) ]]'

finish
