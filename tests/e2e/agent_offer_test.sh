#!/usr/bin/env bash
# The model's refused command reaches the user as the offer, in tmux, with the model API
# speaking the format given as $1 (openai or anthropic). Deny gives the model exactly the
# sandboxed result and never a word about the offer; Allow once reruns the command on the host
# and the model's next request starts the result with the outside-the-sandbox note; the rerun
# never sees Caretz's API key; the transcript says what ran where.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
PROVIDER=$1
own_home
ws=$(new_workspace)
out=$(new_outside_dir)
trap 'agent_cleanup; rm -rf "$ws" "$out"' EXIT

start_model "$(
    cat <<EOF
[
  {"text": "Trying it.", "tool_calls": [{"name": "shell", "arguments": {"command": "touch $out/denied"}}]},
  {"text": "ANSWER-ONE: no luck."},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "echo started-\$((6*7)); sleep 1; touch $out/allowed"}}]},
  {"text": "ANSWER-TWO: created."},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "env; touch $out/env"}}]},
  {"text": "ANSWER-THREE: listed."}
]
EOF
)"
model_env "$PROVIDER"
tmux_caretz /bin/bash "$ws" --provider "$PROVIDER" --ask-sandbox-off -p "make the denied file"
# The pane's raw bytes: the model's command prints through the session's terminal, which has
# made each '\n' "\r\n" already; nothing may add a second '\r'.
raw="$AGENT_TMP/pane.raw"
tmux -L "$TMUX_SOCKET" pipe-pane -o -t main "cat >> $raw"

check_screen "-p sends the first prompt; the model's text streams to the screen" "Trying it."
check_screen "the refused command opens the offer" "The sandbox refused this command"
check "... naming the refused path" contains "$(screen_text)" "write: $out/denied"
check "... and waiting for a choice" contains "$(screen_text)" "choice>"
keys Enter
check_screen "Enter denies, and the turn goes on to the model's answer" "ANSWER-ONE"
check "nothing ran outside: the file does not exist" test ! -e "$out/denied"
check "no line on the terminal ends in two \\r (the model's command output included)" \
    not grep -qaP '\r\r$' "$raw"
expected="exit status: 1
touch: cannot touch '$out/denied': Read-only file system"
check "after Deny the model gets exactly the sandboxed result" test "$(tool_result 2)" == "$expected"
# Requests 1-3: everything the model was sent before any approval, the next turn included.
for word in OUTSIDE "outside the sandbox" offer deny Deny approv decision refus; do
    check "nothing sent to the model mentions the offer (\"$word\")" \
        not_contains "$(all_requests | head -3)" "$word"
done
check "-p on a terminal stays interactive: the prompt is back" wait_for_prompt

type_line "make the allowed file"
# An answer typed while the model's command runs, before the offer is up, must not answer it.
wait_for_screen "started-42" 15
keys o Enter
check_screen "the second refusal opens the offer too" "write: $out/allowed"
sleep 0.5
check "... and keys typed during the turn did not answer it" \
    eval '[[ ! -e $out/allowed && $(screen_text | grep -v "^$" | tail -1) == "choice>" ]]'
keys o
check_screen "o allows once and the turn goes on" "ANSWER-TWO"
check "the command ran on the host: the file exists" test -e "$out/allowed"
wait_for_prompt
check "... and the keys typed before the offer did not become the next prompt either" \
    test "$(count_lines '^caretz> o')" -eq 0
result=$(tool_result 4)
check "the next request's tool result starts with the outside-the-sandbox note" \
    contains "$(head -1 <<<"$result")" "ran OUTSIDE the sandbox"
check "... then the host run's exit status" test "$(sed -n 2p <<<"$result")" == "exit status: 0"

type_line "show the environment"
check_screen "a refused env offers too" "write: $out/env"
keys o
check_screen "the env rerun finishes" "ANSWER-THREE"
result=$(tool_result 6)
check "the rerun ran env on the host (its output is in the result)" contains "$result" "HOME=$TEST_HOME"
check "CARETZ_API_KEY never reaches the rerun's environment" not_contains "$result" "$API_KEY"
check "... nor the file it wrote" not_contains "$(cat "$out/env")" "$API_KEY"

type_line "/allowances"
check_screen "/allowances lists none after Allow once" "No command is allowed outside the sandbox"
type_line "/quit"
check_screen "/quit leaves Caretz with status 0" "CARETZ-EXITED 0"

# Other tests may write transcripts at the same time: take the one whose session ran here.
transcript=$(grep -l "\"cwd\":\"$ws\"" "$TEST_HOME"/.local/state/caretz/sessions/*.jsonl 2>/dev/null | head -1)
check "a transcript was written under ~/.local/state/caretz/sessions" test -n "$transcript"
lines=$(cat "$transcript" 2>/dev/null)
check "the transcript records the sandboxed attempt after Deny" \
    contains "$lines" "\"command\":\"touch $out/denied\",\"decision\":\"deny\""
check "... and the approved run on the host" \
    contains "$lines" "\"command\":\"echo started-\$((6*7)); sleep 1; touch $out/allowed\",\"decision\":\"allow_once\""
check "... with where each ran" contains "$(grep -F "touch $out/allowed" <<<"$lines" | grep -F tool_result)" '"ran":"host"'
check "... and the user's prompts" contains "$lines" '"text":"make the allowed file"'
check "the transcript is readable by its owner only" test "$(stat -c %a "$transcript")" == 600

finish
