#!/usr/bin/env bash
# What a person does in the first minute, with rc files people really have, for one shell ($1:
# bash, zsh or fish): resize the window at Caretz's prompt, type right after Ctrl-C, type ahead
# while a command runs, pipe `caretz exec` into another program, run a password prompt with no
# terminal behind Caretz, resize during a long `caretz exec`. Caretz runs in a tmux pane started
# with runuser, so the pane is its controlling terminal, as in a person's own terminal.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
SHELL_NAME=${1:-bash}
USER_SHELL=$(command -v "$SHELL_NAME")

own_home
ws=$(new_workspace)
modes="$TEST_HOME/stty-owner-$$"
trap 'end_tmux; rm -rf "$ws" "$TEST_HOME" "$modes".*' EXIT

# The rc files of a real user: vi mode, a prompt that prints, history written as it goes, zsh's
# completion system, fish universal variables.
as_user "$USER_SHELL" "$TEST_HOME" bash -c '
    cat >.bashrc <<"EOF"
set -o vi
HISTFILE=~/.bash_history
shopt -s histappend
PROMPT_COMMAND="history -a; printf \"\\033]0;%s\\007\" \"\$PWD\""
PS1="\u@\h:\w\$ "
EOF
    cat >.zshrc <<"EOF"
bindkey -v
autoload -Uz compinit && compinit
HISTFILE=~/.zsh_history
SAVEHIST=1000
setopt INC_APPEND_HISTORY
precmd() { print -Pn "\e]0;%~\a" }
EOF
    mkdir -p .config/fish
    cat >.config/fish/config.fish <<"EOF"
fish_vi_key_bindings
set -U fish_greeting ""
set -U caretz_started (date +%s%N)
EOF'
init_fish_home "$TEST_HOME"
fish_variables_before=$(cat "$TEST_HOME/.config/fish/fish_variables" 2>/dev/null)

# The lines the pane showed after the one that ran COMMAND at the prompt, up to the next prompt.
output_of() {
    whole_screen | awk -v cmd="caretz> $1" '
        $0 == cmd { grab = 1; out = ""; next }
        grab && /^caretz>/ { grab = 0; last = out }
        grab { out = out $0 "\n" }
        END { printf "%s", grab ? out : last }'
}
# expect_output NAME COMMAND EXPECTED: COMMAND, typed at the prompt, printed exactly EXPECTED.
expect_output() {
    wait_for_prompt
    local before
    before=$(whole_screen | grep -cxF -- "caretz> $2")
    type_line "$2"
    wait_for_count "^caretz> $(printf '%s' "$2" | sed 's/[][\\.*^$]/\\&/g')\$" "$before" 10
    wait_for_prompt
    local got
    got=$(output_of "$2")
    if [[ $got == "$3" ]]; then pass "$1"; else fail "$1" "expected: $3" "got: $got"; fi
}
# Caretz in the pane with the user's shell, the terminal's modes saved around it.
pane_caretz() {
    rm -f "$modes".*
    start_pane "$(user_command_line "$USER_SHELL" "$ws" "stty -g > $modes.before; $E2E_BIN; stty -g > $modes.after; echo CARETZ-EXITED; sleep 600")"
    wait_for_screen "caretz>" 10
}

# 1. The window is resized while Caretz waits at its prompt.
pane_caretz
expect_output "!echo one shows one" '!echo one' 'one'
tmux_ resize-window -t main -x 150 -y 45
sleep 0.5
expect_output "after a resize at the prompt, !echo two shows two" '!echo two' 'two'
expect_output "... !echo three shows three" '!echo three' 'three'
expect_output "... and the command sees the new size" '!stty size' '45 150'
tmux_ resize-window -t main -x 100 -y 30
sleep 0.5
tmux_ resize-window -t main -x 120 -y 40
sleep 0.5
expect_output "after two resizes in a row the output is still the command's own" '!echo four' 'four'
expect_output "... and so is the size" '!stty size' '40 120'
check "no command was reported interrupted" not_contains "$(whole_screen)" "[exit 130]"

# 2. Keys typed at once after Ctrl-C belong to the prompt, in order.
for round in 1 2 3; do
    wait_for_prompt
    type_line '!sleep 30'
    # Ctrl-C once sleep runs, as a person watching would (see terminal_test.sh).
    command_pid 'sleep 30' >/dev/null
    sleep 0.3
    tmux_ send-keys -t main C-c "!echo next-$round-'o'k" Enter
    check "round $round: keys typed right after Ctrl-C reach the prompt" \
        wait_for_screen $'\n'"next-$round-ok" 10
done

# 2b. Lines typed while a command runs: one it reads is its own; those it leaves run at the next
#     prompt, in order, as a shell would run them (the tty showed them as they were typed).
#     The command runs on for a second after its read, so that all three lines are typed while
#     it runs (under load, each tmux send-keys takes a while).
wait_for_prompt
type_line '!sleep 2; read x; sleep 1; echo "read:$x" | tr a-z A-Z'
command_pid 'sleep 2' >/dev/null
type_line 'for-the-command'
type_line '!echo typed-ahead-one | tr a-z A-Z'
type_line '!echo typed-aheadx'$'\x7f'' | tr a-z A-Z'
check "a line typed during a command that reads it goes to the command" \
    wait_for_screen $'\nREAD:FOR-THE-COMMAND' 10
check "lines typed ahead that the command left run at the next prompt" \
    wait_for_screen $'\nTYPED-AHEAD-ONE' 10
check "... in order, with the keys' editing (a backspace) applied" \
    wait_for_screen $'TYPED-AHEAD-ONE\ncaretz> !echo typed-ahead | tr a-z A-Z\nTYPED-AHEAD' 10
check "... and the line the command read does not run again" \
    test "$(count_lines 'caretz> for-the-command')" -eq 0

# 3. The shell's own bookkeeping (history, universal variables, completion dump) never shows.
expect_output "the rc files' history, prompts and variables leave the output clean" \
    '!echo clean-output' 'clean-output'
screen=$(whole_screen)
check "no error from the session shell's bookkeeping" not_contains_nocase "$screen" "error"
check "... nor a read-only complaint" not_contains_nocase "$screen" "read-only"
if [[ $SHELL_NAME == fish ]]; then
    expect_output "fish's universal variables of the host are there" \
        '!set -q caretz_started; and echo universal-seen' 'universal-seen'
    check "... and what the session wrote to them stayed in the sandbox" \
        test "$(cat "$TEST_HOME/.config/fish/fish_variables")" == "$fish_variables_before"
fi
wait_for_prompt
tmux_ send-keys -t main C-d
check "Ctrl-D leaves Caretz" wait_for_screen "CARETZ-EXITED" 5
check "... and the terminal's modes are as before" modes_restored

# 4. Output into a pipe or a file arrives byte for byte.
caretz_exec() { as_user "$USER_SHELL" "$ws" "$E2E_BIN" exec "$@" </dev/null; }
for mode in session fresh; do
    flag=()
    [[ $mode == fresh ]] && flag=(--no-session)
    caretz_exec "${flag[@]}" 'printf "a\nb\rc\r\n"' >"$ws/got"
    printf 'a\nb\rc\r\n' >"$ws/want"
    check "$mode: printf into a pipe is byte-exact" cmp -s "$ws/got" "$ws/want"
    head -c 1000000 /dev/urandom >"$ws/random.bin"
    chmod 0644 "$ws/random.bin"
    caretz_exec "${flag[@]}" 'cat random.bin' >"$ws/copy.bin"
    check "$mode: a 1 MB binary file copied through caretz exec is identical" \
        cmp -s "$ws/random.bin" "$ws/copy.bin"
    if [[ $mode == session ]]; then
        # The supervisor passes on what the shell's terminal holds in batches: the last one,
        # read as the shell ends, arrives too, before the news of the end.
        head -c 3000000 /dev/urandom >"$ws/big.bin"
        chmod 0644 "$ws/big.bin"
        status=0
        caretz_exec 'cat big.bin; exit 7' >"$ws/big-copy.bin" || status=$?
        check "session: 3 MB printed right before the command ends the shell arrive whole" \
            cmp -s "$ws/big.bin" "$ws/big-copy.bin"
        check "session: ... and caretz exec exits with the shell's status" test "$status" -eq 7
    fi
    n=$(caretz_exec "${flag[@]}" 'ls | wc -l')
    check "$mode: \$(caretz exec ...) has no carriage return" test "$n" == "$(ls "$ws" | wc -l)"
    # Into a file the command's output is no terminal either, as in a shell: no pager starts
    # (git -p pages when it is one, and would wait for keys nobody can press), and nothing
    # is coloured or positioned for a screen.
    status=0
    as_user "$USER_SHELL" "$ws" timeout 30 "$E2E_BIN" exec "${flag[@]}" \
        'git -p help -a; test -t 1 && echo on-a-terminal || echo not-a-terminal' \
        </dev/null >"$ws/paged" 2>&1 || status=$?
    check "$mode: a pager into a file does not hang caretz exec" test "$status" -eq 0
    check "... the command's output is no terminal" \
        test "$(tail -1 "$ws/paged")" == "not-a-terminal"
    check "... and no escape sequence reached the file" not grep -q $'\e' "$ws/paged"
done
printf '!printf "x\\ny\\n"\n' | as_user "$USER_SHELL" "$ws" "$E2E_BIN" >"$ws/repl-out" 2>/dev/null
printf 'x\ny\n' >"$ws/want"
check "the REPL's output into a file is byte-exact" cmp -s "$ws/repl-out" "$ws/want"

# 5. With no terminal behind Caretz, a program that reads the terminal gets the end of input.
for mode in session fresh; do
    flag=()
    [[ $mode == fresh ]] && flag=(--no-session)
    start=$SECONDS
    out=$(as_user "$USER_SHELL" "$ws" timeout 20 "$E2E_BIN" exec "${flag[@]}" \
        'python3 -c "import getpass; getpass.getpass()" 2>/dev/null; echo after-getpass' </dev/null)
    check "$mode: getpass with no terminal ends, and the command goes on" contains "$out" "after-getpass"
    check "... within seconds" test $((SECONDS - start)) -lt 10
    start=$SECONDS
    as_user "$USER_SHELL" "$ws" timeout 20 "$E2E_BIN" exec "${flag[@]}" \
        'python3 -c "import getpass; getpass.getpass()"' </dev/null >/dev/null 2>&1
    rc=$?
    check "$mode: the exit status is the command's own (1), not a timeout" test "$rc" -eq 1
    out=$(as_user "$USER_SHELL" "$ws" timeout 20 "$E2E_BIN" exec "${flag[@]}" \
        'newgrp root </dev/null; echo after-newgrp' </dev/null 2>&1)
    check "$mode: newgrp with no terminal ends" contains "$out" "after-newgrp"
    check "... within seconds" test $((SECONDS - start)) -lt 20
done
out=$(printf '!python3 -c "import getpass; getpass.getpass()" 2>/dev/null; echo repl-after\n' |
    as_user "$USER_SHELL" "$ws" timeout 20 "$E2E_BIN" 2>&1)
check "the REPL without a terminal does not hang on a password prompt" contains "$out" "repl-after"

# 6. The model's commands: a resize at the prompt reaches them, and nobody types into them,
#    so a password prompt gets the end of input, on a terminal and with --print alike.
if [[ $SHELL_NAME == bash ]]; then
    end_tmux
    source "$(dirname "$0")/agent_lib.sh"
    trap 'agent_cleanup; rm -rf "$ws" "$TEST_HOME" "$modes".*' EXIT
    getpass='python3 -c \"import getpass; getpass.getpass()\" 2>/dev/null; echo after-getpass'
    start_model "[
      {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"echo model-one\"}}]},
      {\"text\": \"ANSWER-ONE\"},
      {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"stty size </dev/tty\"}}]},
      {\"text\": \"ANSWER-TWO\"},
      {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"model_var=still-here; $getpass\"}}]},
      {\"text\": \"ANSWER-THREE\"},
      {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"$getpass\"}}]},
      {\"text\": \"ANSWER-FOUR\"}
    ]"
    model_env openai
    pane_caretz
    type_line "first"
    wait_for_screen "ANSWER-ONE" 15
    check "the model's first command gets its own output" test "$(tool_result 2)" == "exit status: 0
model-one"
    wait_for_prompt
    tmux_ resize-window -t main -x 150 -y 45
    sleep 0.5
    type_line "second"
    wait_for_screen "ANSWER-TWO" 15
    check "after a resize at the prompt, the model's command sees the new size" \
        test "$(tool_result 4)" == "exit status: 0
45 150"
    wait_for_prompt
    type_line "third"
    check "a model's password prompt on a terminal gets the end of input" \
        wait_for_screen "ANSWER-THREE" 15
    check "... and the command went on" contains "$(tool_result 6)" "after-getpass"
    # The ends of input offered to the model's password prompt were taken or dropped: none
    # reached the session shell's prompt and ended it, so a typed command runs in that shell.
    wait_for_prompt
    type_line '!echo "typed-after-[$model_var]"'
    check "after the model's password prompt, the session shell goes on with its state" \
        wait_for_screen "typed-after-[still-here]" 10
    start=$SECONDS
    out=$(as_user "$USER_SHELL" "$ws" timeout 30 "$E2E_BIN" --print -p "fourth" </dev/null 2>/dev/null)
    check "--print with a model's password prompt ends" test "$out" == "ANSWER-FOUR"
    check "... within seconds" test $((SECONDS - start)) -lt 15
fi

# 7. A long `caretz exec` on a terminal follows the window's size.
for mode in session fresh; do
    flag=
    [[ $mode == fresh ]] && flag=--no-session
    start_pane "$(user_command_line "$USER_SHELL" "$ws" "$E2E_BIN exec $flag 'echo started; sleep 2; stty size'; echo EXEC-DONE; sleep 600")"
    wait_for_screen "started" 10
    tmux_ resize-window -t main -x 111 -y 33
    check "$mode: caretz exec passes a resize on to the command" wait_for_screen "33 111" 10
done

finish
