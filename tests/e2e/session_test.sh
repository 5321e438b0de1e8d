#!/usr/bin/env bash
# Session mode as the unprivileged test user with $1 (bash, zsh or fish) as $SHELL and a user
# rc that sets its own prompt hook and nounset: shell state persists, exit statuses and output
# boundaries are right, forged marks are just output, and nothing outlives Caretz.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
SHELL_NAME=$1
SH=$(command -v "$SHELL_NAME")

own_home
ws="$TEST_HOME/ws"
trap 'rm -rf "$TEST_HOME"' EXIT
runuser -u "$E2E_USER" -- mkdir -p "$ws/sub"
case $SHELL_NAME in
    bash) rc="$TEST_HOME/.bashrc" body='set -u
PROMPT_COMMAND="echo user-hook >> /tmp/user-hook.log; slow_prompt"
# After the first prompt, a prompt that takes 3 s while ~/.slow-prompt exists (a slow git
# status in it, say).
slow_prompt() { if [ -n "${drawn-}" ] && [ -e ~/.slow-prompt ]; then sleep 3; fi; drawn=1; }
alias ll="echo alias-from-rc"
greet() { echo "hello from rc"; }
if [ -e ~/.slow-rc ]; then sleep 0.6; fi
if [ -e ~/.exit-rc ]; then exit 5; fi' ;;
    zsh) rc="$TEST_HOME/.zshrc" body='setopt nounset
precmd() { echo user-hook >> /tmp/user-hook.log; slow_prompt }
slow_prompt() { if [[ -n ${drawn-} && -e ~/.slow-prompt ]]; then sleep 3; fi; drawn=1 }
alias ll="echo alias-from-rc"
greet() { echo "hello from rc" }
if [[ -e ~/.slow-rc ]]; then sleep 0.6; fi
if [[ -e ~/.exit-rc ]]; then exit 5; fi' ;;
    fish) rc="$TEST_HOME/.config/fish/config.fish" body='function __user_hook --on-event fish_prompt
    echo user-hook >> /tmp/user-hook.log
    if set -q drawn; and test -e ~/.slow-prompt; sleep 3; end
    set -g drawn 1
end
alias ll="echo alias-from-rc"
function greet; echo "hello from rc"; end
if test -e ~/.slow-rc; sleep 0.6; end
# exit would end only config.fish; exec ends the shell.
if test -e ~/.exit-rc; exec sh -c "exit 5"; end' ;;
esac
printf '%s\n' "$body" | runuser -u "$E2E_USER" -- tee -a "$rc" >/dev/null

repl() { OUT=$(printf '%s\n' "$@" | as_user "$SH" "$ws" "$E2E_BIN" 2>&1); RC=$?; }

if [[ $SHELL_NAME == fish ]]; then set_x='!set -gx X 42'; else set_x='!export X=42'; fi
repl '!cd sub' '!pwd' "$set_x" '!echo "x=$X"' '!greet' '!ll' '!cat /tmp/user-hook.log'
check "cd persists between commands" contains "$OUT" "$ws/sub"
check "exported variables persist" contains "$OUT" "x=42"
check "functions from the user's rc work" contains "$OUT" "hello from rc"
check "aliases from the user's rc work" contains "$OUT" "alias-from-rc"
check "the user's own prompt hook still runs" contains "$OUT" "user-hook"
check "the REPL exits 0 at the end of its input" test "$RC" -eq 0

caretz_as_user "$SH" "$ws" exec 'true'
check "exit status 0" test "$RC" -eq 0
caretz_as_user "$SH" "$ws" exec 'false'
check "exit status 1" test "$RC" -eq 1
caretz_as_user "$SH" "$ws" exec 'no-such-command-here'
check "exit status 127 for a missing command" test "$RC" -eq 127

# A command is over at its end mark: the prompt the shell draws after it (the user's prompt
# code) is no part of it, and a slow one delays the next command, not this one.
runuser -u "$E2E_USER" -- touch "$TEST_HOME/.slow-prompt"
started=$(date +%s%N)
caretz_as_user "$SH" "$ws" exec --json 'cd sub; echo fast'
check "a slow prompt after the command does not delay its result" \
    test $(($(date +%s%N) - started)) -lt 2500000000
check "... which has its output, status and the directory it left" \
    contains "$OUT" '"cwd":"'"$ws"'/sub","decision":null,"exit_code":0,"output":"fast\n"'
repl '!cd sub' '!pwd'
check "the next command waits for that prompt and runs where the last one left" \
    contains "$OUT" "$ws/sub"
rm -f "$TEST_HOME/.slow-prompt"

# Where a start's time goes (CARETZ_PHASE_TIMES, for bench/run.sh): an rc that takes 0.6 s
# shows in the phase of the shell's start, not in the sandbox's before it or the command after.
# The shell starts with the command: no prompt comes before it.
runuser -u "$E2E_USER" -- touch "$TEST_HOME/.slow-rc"
E2E_ENV=(CARETZ_PHASE_TIMES="$TEST_HOME/phases")
caretz_as_user "$SH" "$ws" exec true
E2E_ENV=()
rm -f "$TEST_HOME/.slow-rc"
phases=$(cat "$TEST_HOME/phases" 2>/dev/null)
# "NAME MICROSECONDS" lines: the names in order, and the named phase's time.
phase_names=$(sed 's/ [0-9]*$//' <<<"$phases" | paste -sd'|')
phase_us() { awk -v name="$1" 'substr($0, 1, length(name) + 1) == name " " {print $NF}' <<<"$phases"; }
check "the session's start is broken down: sandbox, then the shell and the user's rc, then the command" \
    contains "$phase_names" "bwrap start|sandbox setup|sandbox mounts, supervisor start|shell start, the user's rc|command|end"
check "... where the slow rc is in the shell's phase" test "$(phase_us "shell start, the user's rc")" -ge 600000
check "... and in neither phase around it" \
    test "$(phase_us "sandbox mounts, supervisor start")" -lt 600000 -a "$(phase_us command)" -lt 600000

# The shell starts with its first command: an rc that ends the shell ends it before the
# command, which never runs, and Caretz says so.
runuser -u "$E2E_USER" -- touch "$TEST_HOME/.exit-rc"
caretz_as_user "$SH" "$ws" exec 'echo never-ran'
rm -f "$TEST_HOME/.exit-rc"
check "an rc that exits: the start failed (125), with the shell's status" \
    contains "$OUT" "the session shell exited while starting (status 5)"
check "... and the command did not run" not_contains "$OUT" "never-ran"
check "... and Caretz exits 125" test "$RC" -eq 125

caretz_as_user "$SH" "$ws" exec 'printf "\033]133;D;0\007"; echo after-forged-mark; false'
check "a forged end mark without the nonce does not end the command early" \
    contains "$OUT" "after-forged-mark"
check "... and the real status still arrives" test "$RC" -eq 1
caretz_as_user "$SH" "$ws" exec 'printf "\033]133;D;0;caretz=0123456789abcdef0123456789abcdef\007"; echo after-wrong-nonce'
check "a mark with a wrong nonce is just output" contains "$OUT" "after-wrong-nonce"

if [[ $SHELL_NAME == fish ]]; then
    multi=$'set x 1\nif test $x = 1\n  echo "multi yes"\nend\necho \'single "quotes"\''
else
    multi=$'x=1\nif [ "$x" = 1 ]; then echo "multi yes"; fi\ncat <<EOF\nheredoc $x\nEOF\necho \'single "quotes"\''
fi
caretz_as_user "$SH" "$ws" exec "$multi"
check "multi-line commands run" contains "$OUT" "multi yes"
check "quotes survive" contains "$OUT" 'single "quotes"'
[[ $SHELL_NAME != fish ]] && check "heredocs work" contains "$OUT" "heredoc 1"

# fish's `exit` in a sourced file only leaves the file, so fish's shell is killed instead.
if [[ $SHELL_NAME == fish ]]; then end_shell='!kill -9 $fish_pid'; else end_shell='!exit 3'; fi
repl "$end_shell" '!echo fresh-shell-after-exit' '!pwd'
check "a command that ends the shell gets a clear message" contains "$OUT" "ended the session shell"
check "... and the next command gets a fresh shell" contains "$OUT" "fresh-shell-after-exit"

if [[ $SHELL_NAME == fish ]]; then
    # fish's folder is private to the sandbox, for its universal variables; but a program
    # cannot put config there (config.fish, or conf.d where the user has none) for the next
    # fish of the session, which would run it before the hook takes the nonce.
    plant='echo "echo planted > /tmp/planted" >'
    repl "!sh -c '$plant ~/.config/fish/config.fish; mkdir -p ~/.config/fish/conf.d; $plant ~/.config/fish/conf.d/x.fish; kill -9 \$PPID'" \
        '!cat /tmp/planted 2>/dev/null || echo nothing-planted-ran' '!set -U caretz_u 1; echo universal-set'
    check "a program cannot plant config for the next fish of the session" \
        contains "$OUT" "nothing-planted-ran"
    check "... its writes were refused" contains "$OUT" "Read-only file system"
    check "... and fish still writes its universal variables" contains "$OUT" "universal-set"
    check "... with no complaint" not_contains "$OUT" "Unable to"
fi

lines=$(as_user "$SH" "$ws" "$E2E_BIN" exec 'head -c 50000000 /dev/zero | tr "\0" x | fold -w 100; echo' </dev/null | tr -d '\r' | wc -c)
check "50 MB of output arrives whole" test "$lines" -eq 50500000

# Into a pipe, a command's output comes through a pipe of its own, its end mark through the
# shell's terminal. With the supervisor slowed down (each of its reads returns 150 ms late),
# output written while it read the terminal still counts as the command's.
as_user "$SH" "$ws" "$E2E_BIN" exec \
    'sleep 1.5; echo tty-line >/dev/tty; sleep 0.05; echo last-line' </dev/null >"$TEST_HOME/slow.out" 2>&1 &
exec_pid=$!
supervisor=
for _ in $(seq 50); do
    # The first process run as `caretz __supervise` (bwrap's command line ends in those words;
    # the network forwarder, the supervisor's child, starts with them too).
    for p in $(descendants "$exec_pid"); do
        mapfile -d '' args <"/proc/$p/cmdline" 2>/dev/null
        [[ ${args[0]-} == */caretz && ${args[1]-} == __supervise ]] && { supervisor=$p; break; }
    done
    [[ -n $supervisor ]] && break
    sleep 0.05
done
strace -q -p "$supervisor" -e trace=read -e inject=read:delay_exit=150000 -o "$TEST_HOME/slow.trace" &
strace_pid=$!
check "strace slows the supervisor down" wait_until_traced "$supervisor"
wait "$exec_pid"
kill "$strace_pid" 2>/dev/null; wait "$strace_pid" 2>/dev/null
check "... while it reads" grep -q '^read(.*DELAYED' "$TEST_HOME/slow.trace"
check "... and the command's last output, written meanwhile, arrived" \
    contains "$(cat "$TEST_HOME/slow.out")" "last-line"

marker="sleep 7$$"
repl "!$marker &" '!echo started'
sleep 0.5
check "no process of the session survives Caretz" test -z "$(pgrep -u "$E2E_USER" -f "$marker")"
pkill -u "$E2E_USER" -f "$marker"

# `caretz exec` returns once its command's result is out, without waiting for its sandbox to
# wind down; that sandbox still goes, at once.
marker="sleep 8$$"
caretz_as_user "$SH" "$ws" exec "$marker & echo job-started"
check "caretz exec with a background job returns its command's output" \
    contains "$OUT" "job-started"
none_left() {
    for _ in $(seq 20); do
        [[ -z $(pgrep -u "$E2E_USER" -f "$1") ]] && return 0
        sleep 0.1
    done
    return 1
}
check "... and within 2 s nothing of its session is left" none_left "$marker"
pkill -u "$E2E_USER" -f "$marker"

# Typing ahead on a terminal (tmux): a whole line and a partial one typed while a command runs
# that does not read them were meant for Caretz's prompt. The session shell must run neither.
trap 'end_tmux; rm -rf "$TEST_HOME"' EXIT
start_pane "$(user_command_line "$SH" "$ws" "$E2E_BIN; sleep 600")"
wait_for_screen "caretz>" 10
tmux_ send-keys -t main -l '!sleep 2'
tmux_ send-keys -t main Enter
sleep 0.5
tmux_ send-keys -t main -l 'touch typed-ahead-ran'
tmux_ send-keys -t main Enter
tmux_ send-keys -t main -l 'touch partial-'
wait_for_screen $'partial-\ncaretz>' 10
tmux_ send-keys -t main -l '!echo next-command; ls'
tmux_ send-keys -t main Enter
check "typed-ahead input: the next command runs as typed" wait_for_screen $'\nnext-command' 10
check "... and the shell ran no line typed ahead" test ! -e "$ws/typed-ahead-ran"
check "... nor the partial one" not_contains "$(screen_text)" "partial-!echo"
end_tmux

finish
