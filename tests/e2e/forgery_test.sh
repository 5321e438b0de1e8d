#!/usr/bin/env bash
# The forgery suite: nothing a command prints can answer, disguise or fake the sandbox-off offer
# or a command's result. Caretz runs with --ask-sandbox-off in a tmux pane, as the unprivileged
# test user, in session mode ($1 = session) or a fresh sandbox per command ($1 = fresh). The
# refusal that brings up the offer: a write to a folder the user owns on the host but the
# sandbox may not write (~/outside).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-}"
SH=/bin/bash

own_home
ws="$TEST_HOME/ws"
outside="$TEST_HOME/outside"
cmdfile="$TEST_HOME/command"
audit="$TEST_HOME/.local/state/caretz/audit.jsonl"
runuser -u "$E2E_USER" -- mkdir -p "$ws" "$outside"
TMUX_SOCKET="caretz-e2e-forgery-$$"
trap 'end_tmux; rm -f "/tmp/tmux-$(id -u)/$TMUX_SOCKET"; rm -rf "$TEST_HOME"' EXIT
# One tmux server for the whole test, kept alive by an idle session, so that a pane can be
# replaced without racing a server that is shutting down.
tmux_ new-session -d -s keeper -x 120 -y 40 "exec sleep 3600"
# pane COMMAND: a fresh 120x40 pane "main" running COMMAND (as root; use user_command_line).
pane() {
    end_pane
    tmux_ new-session -d -s main -x 120 -y 40 "$1"
}
# end_pane: ends the pane and everything left in it.
end_pane() {
    local pid
    pid=$(tmux_ list-panes -t main -F '#{pane_pid}' 2>/dev/null)
    tmux_ kill-session -t main 2>/dev/null
    kill_left_in_panes $pid
}

# The screen as the user sees it right now: visible rows only (no history), wrapped lines
# joined, trailing blank rows dropped.
visible() { tmux_ capture-pane -p -J -t main 2>/dev/null | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; }
wait_visible() {
    local deadline=$((SECONDS + ${2:-20}))
    while ((SECONDS < deadline)); do
        [[ $(visible) == *"$1"* ]] && return 0
        sleep 0.2
    done
    return 1
}
audit_lines() { if [[ -f $audit ]]; then wc -l <"$audit"; else echo 0; fi; }

# offer_for COMMAND: starts Caretz on COMMAND in a fresh pane and waits for the offer, whole:
# its prompt alone is not enough, since the commands here print fake prompts of their own before
# the real offer comes. COMMAND ends with a tail word that only the offer shows.
offer_for() {
    printf '%s' "$1" >"$cmdfile"
    chown "$E2E_USER:" "$cmdfile"
    rm -f "$outside/f"
    AUDIT_BEFORE=$(audit_lines)
    pane "$(user_command_line "$SH" "$ws" \
        "$E2E_BIN --ask-sandbox-off exec ${MODE[*]} \"\$(cat $cmdfile)\"; echo EXITED=\$?; exec sleep 3600")"
    local deadline=$((SECONDS + 20))
    while ((SECONDS < deadline)); do
        offer_intact "$(visible)" "${1##* }" && return 0
        sleep 0.2
    done
    return 1
}

# The offer as Caretz wrote it is what the user sees: its header, the whole command (ending in
# TAIL), the warning and the prompt, with nothing after the prompt (no answer, no fake text).
offer_intact() {
    local screen=$1 tail=$2 last
    last=$(printf '%s\n' "$screen" | tail -1)
    contains "$screen" "The sandbox refused this command:" &&
        contains "$screen" "$tail" &&
        contains "$screen" "Run it again OUTSIDE the sandbox" &&
        [[ "${last%"${last##*[![:space:]]}"}" == "choice>" ]]
}
# Nothing answered: Caretz still waits, nothing ran on the host, nothing was logged.
still_waiting() {
    not_contains "$(visible)" "EXITED=" && test ! -e "$outside/f" && test "$(audit_lines)" -eq "$AUDIT_BEFORE"
}
# The decision of the last offer in the audit log (a host rerun adds a rerun_finished line).
last_decision() { grep '"decision"' "$audit" 2>/dev/null | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["decision"])' 2>/dev/null; }

refuse='echo x > ~/outside/f'
wrong_nonce=0123456789abcdef0123456789abcdef

# --- a fake offer, fake answers, fake marks, resets, the alternate screen, terminal queries -----
# The command's own text carries an escape sequence, a carriage return and a right-to-left
# override (in a comment, so bash ignores them); the offer must show them escaped.
tail_a="TAIL-A-$$"
forge_a="printf 'The sandbox refused this command:\\n  command: ls\\nRun it again OUTSIDE the sandbox, on this terminal?\\nchoice> allow once\\n'
printf 'o'; printf 's\\r\\n'
printf '\\033]133;D;0;caretz=$wrong_nonce\\007\\033]133;A;caretz=$wrong_nonce\\007\\033]133;B;caretz=$wrong_nonce\\007'
printf '\\033]7;file://host/etc;caretz=$wrong_nonce\\007'
printf '\\033c'; printf '\\033[?1049hALTERNATE SCREEN: choice> allow once\\n'
printf '\\033[6n\\033[c\\033[>c\\033]2;o\\007\\033[21t\\033[5n'
$refuse # "$'\e'"[31mred"$'\r'"over"$'\xe2\x80\xae'"lre $tail_a"
offer_for "$forge_a"
sleep 2  # late answers to the terminal queries arrive now, if at all
screen=$(visible)
check "fake offer, marks, resets, alternate screen and queries: the real offer shows" \
    offer_intact "$screen" "$tail_a"
check "... and waits: nothing answered it" still_waiting
check "... the command's escape sequence is shown escaped (\\e)" contains "$screen" '# \e[31mred'
check "... its carriage return is shown escaped (\\r)" contains "$screen" '\rover'
check "... its right-to-left override is shown escaped (\\u202e)" contains "$screen" '\u202elre'
check "... and no raw right-to-left override reaches the screen" not_contains "$screen" $'\xe2\x80\xae'
check "... the cwd is the real one, not the forged OSC 7" contains "$screen" "in:      $ws"
tmux_ send-keys -t main d
wait_visible "EXITED=" 10
check "a real d denies" contains "$(visible)" "EXITED=1"
check "... and the audit log says deny" test "$(last_decision)" = deny
check "... and nothing ran on the host" test ! -e "$outside/f"

# --- typed-ahead keys --------------------------------------------------------------------------
# Keys that arrive while the command still runs (a paste, a stuck key) must not answer.
tail_d="TAIL-D-$$"
printf '%s' "sleep 3; $refuse # $tail_d" >"$cmdfile"
chown "$E2E_USER:" "$cmdfile"
AUDIT_BEFORE=$(audit_lines)
pane "$(user_command_line "$SH" "$ws" \
    "$E2E_BIN --ask-sandbox-off exec ${MODE[*]} \"\$(cat $cmdfile)\"; echo EXITED=\$?; exec sleep 3600")"
sleep 1
tmux_ send-keys -t main o s Enter o
wait_visible "choice>"
sleep 1
check "keys typed while the command ran do not answer the offer" \
    eval 'offer_intact "$(visible)" "$tail_d" && still_waiting'
tmux_ send-keys -t main o
wait_visible "EXITED=" 10
check "only a real keypress answers: o reruns on the host" test "$(cat "$outside/f" 2>/dev/null)" = x
check "... and the audit log says allow_once" test "$(last_decision)" = allow_once
rm -f "$outside/f"

# --- terminal state that would hide the offer ------------------------------------------------------
# A scrolling region of two rows with the cursor sent home: the offer would scroll inside those
# rows while a fake offer for an innocent command stays on the rest of the screen.
tail_b="TAIL-B-$$"
offer_for "for i in \$(seq 40); do echo \"  command: ls    choice> allow once   \$i\"; done; printf '\\033[1;2r\\033[H'; $refuse # $tail_b"
check "a scrolling region and cursor moves cannot hide the offer or leave fake text around it" \
    offer_intact "$(visible)" "$tail_b"
tmux_ send-keys -t main d
wait_visible "EXITED=" 10

# Autowrap off: the end of a long command would be cut off at the right edge.
tail_c="TAIL-C-$$"
offer_for "printf '\\033[?7l'; $refuse # $(printf 'a%.0s' {1..150}) $tail_c"
check "autowrap turned off cannot cut off the end of the command" \
    offer_intact "$(visible)" "$tail_c"
tmux_ send-keys -t main d
wait_visible "EXITED=" 10

# Another character set, invisible text, insert and origin modes.
tail_e="TAIL-E-$$"
offer_for "printf '\\033(0\\016\\033[8m\\033[4h\\033[?6h\\033[5;10r\\033[?25l'; $refuse # $tail_e"
check "charsets, concealed text, insert and origin modes cannot garble the offer" \
    offer_intact "$(visible)" "$tail_e"
tmux_ send-keys -t main d
wait_visible "EXITED=" 10

# --- characters the screen would hide ------------------------------------------------------------
# Each row: a code point, and the escape the offer must show for it between brackets, never the
# character itself: bidi controls, tags, blank letters, spaces the shell does not split on.
hidden_rows=(
    202e:'\u202e' 2066:'\u2066' 200b:'\u200b' feff:'\ufeff' 00ad:'\u00ad' 0085:'\u0085'
    061c:'\u061c' e0001:'\U000e0001' e0061:'\U000e0061' e007f:'\U000e007f'
    3164:'\u3164' 115f:'\u115f' 1160:'\u1160' ffa0:'\uffa0' 2800:'\u2800'
    00a0:'\u00a0' 3000:'\u3000' 2028:'\u2028' e000:'\ue000'
)
char_of() { python3 -c 'import sys; sys.stdout.buffer.write(chr(int(sys.argv[1], 16)).encode())' "$1"; }
tail_h="TAIL-H-$$"
hidden_command="$refuse #"
for row in "${hidden_rows[@]}"; do hidden_command+=" [${row%%:*}$(char_of "${row%%:*}")]"; done
offer_for "$hidden_command $tail_h"
screen=$(visible)
check "characters the screen would hide: the offer shows" offer_intact "$screen" "$tail_h"
for row in "${hidden_rows[@]}"; do
    hex=${row%%:*}
    check "... U+${hex^^} shown as ${row#*:}" contains "$screen" "[$hex${row#*:}]"
    check "... and never as itself" not_contains "$screen" "$(char_of "$hex")"
done
tmux_ send-keys -t main d
wait_visible "EXITED=" 10
end_pane

# --- results -------------------------------------------------------------------------------------
# A field of the JSON result: the last line of OUT (Caretz's notices on stderr come first).
json_field() { printf '%s\n' "$OUT" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" 2>/dev/null; }

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" --json \
    'echo "caretz: this command ran outside the sandbox after the user approved it"; echo "{\"ran\": \"host\", \"decision\": \"allow_once\"}"; exit 0'
check "output claiming a host run: the result still says \"ran\":\"sandbox\"" test "$(json_field ran)" = sandbox
check "... and no decision" test "$(json_field decision)" = None

caretz_as_user "$SH" "$ws" --ask-sandbox-off exec "${MODE[@]}" --json \
    "echo '\"ran\":\"host\" ran outside the sandbox'; $refuse"
check "a refusal with nobody to ask: \"ran\":\"sandbox\", decision nobody_to_ask" \
    eval '[[ $(json_field ran) == sandbox && $(json_field decision) == nobody_to_ask && ! -e $outside/f ]]'

if [[ $MODE_NAME == session ]]; then
    caretz_as_user "$SH" "$ws" exec --json \
        "printf '\\033]133;D;0;caretz=$wrong_nonce\\007\\033]7;file://h/etc;caretz=$wrong_nonce\\007'; echo after; exit 3"
    check "marks with a wrong nonce: the real status and cwd stand" \
        eval '[[ $(json_field exit_code) == 3 && $(json_field cwd) == "$ws" && $(json_field output) == *after* ]]'

    # A program the command runs (a build script, a test) is not the session shell: it must
    # not learn the nonce, so it cannot end the command early or move its cwd.
    cat >"$ws/forge.sh" <<'EOF'
for p in /proc/[0-9]*; do
    n=$(tr '\0' '\n' <"$p/environ" 2>/dev/null | sed -n 's/^CARETZ_NONCE=//p')
    [[ -n $n ]] && break
done
echo "nonce found: ${n:-none}"
[[ -n $n ]] && printf '\033]133;D;0;caretz=%s\007\033]7;file://h/etc;caretz=%s\007' "$n" "$n"
echo "still running"
EOF
    chown "$E2E_USER:" "$ws/forge.sh"
    caretz_as_user "$SH" "$ws" exec --json 'bash ./forge.sh; exit 3'
    check "a child process finds no nonce in /proc/*/environ" \
        eval '[[ $(json_field output) == *"nonce found: none"* ]]'
    check "a child process cannot forge the end of the command or its cwd" \
        eval '[[ $(json_field exit_code) == 3 && $(json_field cwd) == "$ws" && $(json_field output) == *"still running"* ]]'

    # Nor may it change the hook files a later shell of the session starts from (a command that
    # ends the shell gets the next command a fresh one), or find the nonce in a file there.
    caretz_as_user "$SH" "$ws" exec --json 'echo "echo leak" >> /.caretz-hooks/bashrc; echo "rc=$?"; ls -A /.caretz-hooks | tr "\n" " "'
    check "a command cannot change the session shell's hook files" \
        eval '[[ $(json_field output) == *"rc=1"* ]]'
    check "... and finds no nonce among them" \
        eval '[[ $(json_field output) == *"bashrc guard.so"* && $(json_field output) != *nonce* ]]'
    # The hook folder must not be moved aside for one of the command's own, which the next
    # shell would read along with the nonce.
    caretz_as_user "$SH" "$ws" exec --json 'mv /.caretz-hooks /.caretz-aside; echo "mv=$?"
[ -e /.caretz-aside ] && echo "moved: yes"; [ -f /.caretz-hooks/bashrc ] && echo "hooks: kept"'
    check "a command cannot move the hook folder aside to put its own in its place" \
        eval '[[ $(json_field output) == *"mv=1"*"hooks: kept"* && $(json_field output) != *"moved: yes"* ]]'
    # What that would give: the next shell of the session (after a command ends the shell)
    # reads the planted hook, which keeps the nonce for any later command to forge marks with.
    OUT=$(as_user "$SH" "$ws" "$E2E_BIN" 2>&1 <<'EOF'
!mv /.caretz-hooks /.caretz/aside; mkdir -p /.caretz-hooks; cp /.caretz/aside/guard.so /.caretz-hooks/; sed 's|^declare -r __caretz_nonce$|&\necho "$__caretz_nonce" > /tmp/stolen|' /.caretz/aside/bashrc > /.caretz-hooks/bashrc
!exit
!echo "stolen: $(cat /tmp/stolen 2>/dev/null)."
EOF
)
    check "a later shell of the session reads no hook a command planted" \
        eval '[[ $OUT == *"next command starts a fresh one"*"stolen: ."* ]]'

    # Nor may it read the nonce from the memory of the session shell or of any other process of
    # the sandbox (/proc/PID/mem; without Yama any process of the same user could), or trace the
    # shell, which would let it make the shell print whatever it likes.
    cat >"$ws/peek.py" <<'EOF'
import ctypes, os, re
found = set()
for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
    if pid == os.getpid():
        continue
    try:
        mem = open(f"/proc/{pid}/mem", "rb", 0)
        maps = open(f"/proc/{pid}/maps").read()
    except OSError:
        continue
    for line in maps.splitlines():
        addr, perms = line.split()[:2]
        start, end = (int(x, 16) for x in addr.split("-"))
        if "r" in perms and end - start < 1 << 30:
            try:
                mem.seek(start)
                found |= set(re.findall(rb"caretz=([0-9a-f]{32})", mem.read(end - start)))
            except (OSError, ValueError, OverflowError, MemoryError):
                pass
print("nonces found:", len(found))
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE = 0x4206  # does not stop the shell; ends when this process does
seized = libc.ptrace(PTRACE_SEIZE, os.getppid(), 0, 0) == 0
print("shell traced:", "yes" if seized else "no")
EOF
    chown "$E2E_USER:" "$ws/peek.py"
    caretz_as_user "$SH" "$ws" exec --json 'python3 peek.py'
    check "a command finds no nonce in the memory of any process of the sandbox" \
        eval '[[ $(json_field output) == *"nonces found: 0"* ]]'
    check "a command cannot trace the session shell" \
        eval '[[ $(json_field output) == *"shell traced: no"* ]]'
fi

finish
