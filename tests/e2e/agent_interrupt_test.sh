#!/usr/bin/env bash
# Ctrl-C stops the current turn, wherever it is (a running command, a streaming answer, a
# retry's wait), without leaving Caretz; the next prompt works and the model hears what
# happened. Ctrl-D leaves. $1 = session (default) or fresh (--no-session).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
own_home
ws=$(new_workspace)
MODE=()
[[ ${1:-session} == fresh ]] && MODE=(--no-session)
trap 'agent_cleanup; rm -rf "$ws"' EXIT

start_model "$(
    cat <<EOF
[
  {"tool_calls": [{"name": "shell", "arguments": {"command": "echo sleep-\$((6*7)); sleep 31.$$"}},
                  {"name": "shell", "arguments": {"command": "touch second-ran"}}]},
  {"text": "AFTER-SLEEP"},
  {"text": "streaming...", "hang": 30},
  {"status": 429, "retry_after": "30"},
  {"text": "LAST-ANSWER"},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "echo early-\$((6*7)); sleep 32.$$"}}]},
  {"text": "AFTER-EARLY"},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "echo queued-\$((6*7)); sleep 2"}}]},
  {"text": "AFTER-QUEUED"},
  {"text": "ANSWER-TO-TYPED-DURING-COMMAND", "hang": 2},
  {"text": "ANSWER-TO-TYPED-DURING-STREAM"}
]
EOF
)"
model_env openai
tmux_caretz /bin/bash "$ws" "${MODE[@]}"
raw="$AGENT_TMP/pane.raw"
tmux -L "$TMUX_SOCKET" pipe-pane -o -t main "cat >> $raw"
wait_for_prompt
keys C-c
sleep 0.3
check "Ctrl-C at an empty prompt does not leave Caretz" wait_for_prompt

type_line "run the long command"
check_screen "the model's command runs" "sleep-42"
start=$SECONDS
keys C-c
check_screen "Ctrl-C during a command stops the turn" "caretz: stopped (Ctrl-C)" 5
check "... at once" test $((SECONDS - start)) -lt 5
check "... said on a line of its own" test "$(count_lines '^caretz: stopped (Ctrl-C)')" -ge 1
check "... and no line on the terminal ends in two \\r" not grep -qaP '\r\r$' "$raw"
check "... and the prompt is back" wait_for_prompt
check "... the command was stopped" test -z "$(pgrep -u "$E2E_USER" -f "sleep 31.$$")"
check "... the turn's next tool call did not run" test ! -e "$ws/second-ran"
check "... and the model was not asked again" test "$(request_count)" -eq 1

type_line "go on"
check_screen "the next prompt gets an answer" "AFTER-SLEEP"
results=$(tool_results 2)
check "the model hears that the user stopped the command" \
    contains "$results" "exit status: 130 (the user stopped the command with Ctrl-C)"
check "... and that the rest was not run" contains "$results" "not run: the user stopped the turn with Ctrl-C"

type_line "stream something"
check_screen "the answer streams" "streaming..."
start=$SECONDS
keys C-c
check "Ctrl-C while the answer streams stops the turn" wait_for_count "caretz: stopped (Ctrl-C)" 1 5
check "... at once" test $((SECONDS - start)) -lt 5
check "... said on a line of its own" test "$(count_lines '^caretz: stopped (Ctrl-C)')" -ge 1
check "... and no line on the terminal ends in two \\r" not grep -qaP '\r\r$' "$raw"
check "... and the prompt is back" wait_for_prompt

type_line "try once more"
check_screen "a retry's wait is shown" "trying again in 30 s"
start=$SECONDS
keys C-c
check "Ctrl-C during a retry's wait stops the turn at once" wait_for_count "caretz: stopped (Ctrl-C)" 2 5
check "... without waiting the 30 s" test $((SECONDS - start)) -lt 5

type_line "last one"
check_screen "the session still answers" "LAST-ANSWER"
check "the model saw the text that streamed before Ctrl-C" contains "$(sed -n 5p "$REQUESTS")" "streaming..."
# Ctrl-C the moment the command is shown, before the shell has started it: it must still stop
# the turn (a Ctrl-C that reaches the shell while it reads the command line can be lost there).
type_line "stop it early"
wait_for_screen '$ echo early' 15
start=$SECONDS
keys C-c
check "Ctrl-C as a command starts stops the turn" wait_for_count "caretz: stopped (Ctrl-C)" 3 5
check "... at once" test $((SECONDS - start)) -lt 5
check "... said on a line of its own" test "$(count_lines '^caretz: stopped (Ctrl-C)')" -ge 1
check "... and no line on the terminal ends in two \\r" not grep -qaP '\r\r$' "$raw"
check "... and the command does not go on" eval '[[ -z $(pgrep -u "$E2E_USER" -f "sleep 32.$$") ]]'
wait_for_prompt
type_line "and after"
check_screen "... and the session goes on" "AFTER-EARLY"

# What is typed while the turn goes on (its command, its streaming answer) is the next prompt,
# as typed: nothing is lost, and it waits until the turn is over.
type_line "queue behind a command"
check_screen "the model's command runs" "queued-42"
type_line "typed during the command"
check_screen "the turn ends as usual" "AFTER-QUEUED"
check_screen "what was typed during the model's command is the next prompt" \
    "ANSWER-TO-TYPED-DURING-COMMAND"
check "... sent to the model as typed" test "$(last_user "$(request_count)")" == "typed during the command"
type_line "typed during the stream"
check_screen "what was typed while the answer streamed is the next prompt" \
    "ANSWER-TO-TYPED-DURING-STREAM" 15
check "... sent as typed" test "$(last_user "$(request_count)")" == "typed during the stream"
check "... once each" test "$(count_lines '^caretz> typed during the')" -eq 2

keys C-d
check_screen "Ctrl-D leaves Caretz" "CARETZ-EXITED 0"

finish
