#!/usr/bin/env bash
# A conversation survives its Caretz: SIGHUP at the prompt (a dropped ssh connection), SIGHUP
# while a command runs, and /quit, each followed by `caretz --continue` or `--resume` in the
# same folder, in tmux and with --print. The next request holds the earlier conversation (user
# texts, answers, tool results; a command the session ended during is closed as interrupted);
# the sandbox session is new and an earlier Allow for session does not apply; --resume lists
# this folder's conversations and picks one; the prompt history is kept (up-arrow after the
# restart), privately, hidden from the sandbox, without lines typed with a leading space; a
# damaged transcript is an error naming its line; two Caretz never write one conversation.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
own_home
ws=$(new_workspace)
out=$(new_outside_dir)
trap 'agent_cleanup; rm -rf "$ws" "$out"' EXIT
STATE=$TEST_HOME/.local/state/caretz

# print_in DIR ARGS...: Caretz without a terminal in DIR; sets STDOUT, STDERR and RC.
print_in() {
    local dir=$1
    shift
    STDOUT=$(as_user /bin/bash "$dir" "$E2E_BIN" "$@" 2>"$AGENT_TMP/stderr" </dev/null)
    RC=$?
    STDERR=$(cat "$AGENT_TMP/stderr")
}
# request N: the body of the Nth request the model received.
request() { sed -n "${1}p" "$REQUESTS"; }
# hang_up: SIGHUP to the pane's Caretz, as a dropped ssh connection sends it.
hang_up() { kill -HUP "$(caretz_pid)"; }

start_model "$(
    cat <<EOF
[
  {"tool_calls": [{"name": "shell", "arguments": {"command": "touch $out/allowed"}}]},
  {"text": "NOTED-ONE: db7 it is."},
  {"text": "ANSWER-SPACE"},
  {"text": "ANSWER-LAST"},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "touch $out/allowed"}}]},
  {"text": "ANSWER-RESUMED"},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "echo LONG-STARTED; sleep 300.$$"}}]},
  {"text": "PRINTED-AFTER-DROP"},
  {"text": "OTHER-TOPIC"},
  {"text": "ANSWER-PICKED"},
  {"text": "FINAL-BY-ID"}
]
EOF
)"
model_env openai

# --- The first session: a fact, an Allow for session, then the connection drops. ---
tmux_caretz /bin/bash "$ws" --ask-sandbox-off
check "the first session starts" wait_for_prompt
type_line "remember: the failing host is db7"
check_screen "the refused command opens the offer" "The sandbox refused this command"
keys s
check_screen "s allows it for the session; the turn goes on" "NOTED-ONE"
check "the command ran on the host" test -e "$out/allowed"
wait_for_prompt
type_line " secret line typed with a leading space"
check_screen "a line with a leading space still goes to the model" "ANSWER-SPACE"
wait_for_prompt
type_line "last prompt words"
check_screen "the last prompt is answered" "ANSWER-LAST"
wait_for_prompt
hang_up
check_screen "SIGHUP ends Caretz, as a dropped connection does" "CARETZ-EXITED 129"
history=$STATE/history
check "the prompt history is kept in ~/.local/state/caretz/history" \
    contains "$(cat "$history" 2>/dev/null)" "last prompt words"
check "... readable by its owner only" test "$(stat -c %a "$history" 2>/dev/null)" == 600
check "... without the line typed with a leading space" \
    not_contains "$(cat "$history" 2>/dev/null)" "secret line"

# --- --continue on a terminal: the conversation, a new sandbox session, no allowance. ---
tmux_caretz /bin/bash "$ws" --continue --ask-sandbox-off
check_screen "--continue says it continues the conversation" "Continuing the conversation"
check "... and that the sandbox session is new, with no earlier allowance" \
    contains "$(screen_text | tr -d '\n')" "no earlier allowance applies"
wait_for_prompt
keys Up
check "up-arrow after the restart shows the last prompt" \
    wait_for_prompt "caretz> last prompt words" 5
keys Up
check "... and the one before skips the line typed with a leading space" \
    wait_for_prompt "caretz> remember: the failing host is db7" 5
keys C-u
type_line "!cat ~/.local/state/caretz/history"
check_screen "the history is hidden from the sandbox" "hidden: $history"
keys Enter
wait_for_prompt
type_line "what host?"
check_screen "the same command offers again: Allow for session did not carry over" \
    "write: $out/allowed"
keys Enter
check_screen "Deny, and the turn goes on" "ANSWER-RESUMED"
check "... the model got the sandboxed result" contains "$(tool_result 6)" "Read-only file system"
check "the next request holds the earlier prompts" test "$(first_user 5)" == \
    "remember: the failing host is db7"
check "... the model's earlier answers" contains "$(request 5)" "NOTED-ONE: db7 it is."
check "... the earlier tool result (the host run)" \
    contains "$(tool_results 5)" "ran OUTSIDE the sandbox"
check "... and the new prompt last" test "$(last_user 5)" == "what host?"
wait_for_prompt
type_line "run long"
check_screen "a long command runs" "LONG-STARTED"
hang_up
check_screen "SIGHUP while the command runs ends Caretz" "CARETZ-EXITED 129"
end_tmux

# --- --continue --print: the command the session ended during is closed as interrupted. ---
print_in "$ws" --continue --print -p "after the drop"
check "--continue --print exits 0" test "$RC" -eq 0
check "... prints the answer alone" test "$STDOUT" == "PRINTED-AFTER-DROP"
check "... says on stderr that it continues" contains "$STDERR" "Continuing the conversation"
check "... and that one command was still running" contains "$STDERR" "1 command(s) still running"
check "the request holds the first prompt" test "$(first_user 8)" == \
    "remember: the failing host is db7"
check "... the dropped command, closed as interrupted" \
    contains "$(tool_result 8)" "the Caretz session ended while this ran"
check "... and the new prompt" test "$(last_user 8)" == "after the drop"

# --- Another conversation here, then --resume lists both and picks the older one. ---
print_in "$ws" --print -p "another topic"
check "a new conversation in the same folder" test "$STDOUT" == "OTHER-TOPIC"
check "... starts afresh" test "$(first_user 9)" == "another topic"
print_in "$ws" --resume
check "--resume without a terminal exits non-zero" test "$RC" -ne 0
check "... listing this folder's conversations, the latest first" \
    eval '[[ $(sed -n 1p <<<"$STDOUT") == *"another topic"* && $(sed -n 2p <<<"$STDOUT") == *"remember: the failing host"* ]]'
check "... and says how to pick one" contains "$STDERR" "caretz --resume ID"
first_id=$(basename "$(grep -l '"text":"remember: the failing host' "$STATE"/sessions/*.jsonl)" .jsonl)
check "... each with its id" contains "$(sed -n 2p <<<"$STDOUT")" "$first_id"

# choose_none KEY: --resume on a terminal, answered with KEY; the terminal's modes are saved
# before and after, to $modes.before and $modes.after.
modes=$TEST_HOME/stty-resume
choose_none() {
    rm -f "$modes".*
    start_pane "$(user_command_line /bin/bash "$ws" "stty -g > $modes.before; $E2E_BIN --resume; echo CARETZ-EXITED \$?; stty -g > $modes.after; sleep 600")"
    check_screen "--resume on a terminal lists and asks" "Continue which (1-2"
    keys "$1"
    check_screen "$1 picks nothing and leaves, exit status 1" "CARETZ-EXITED 1"
    check "... with the terminal's modes restored" eval 'sleep 0.3; modes_restored'
}
choose_none Enter
choose_none C-c
tmux_caretz /bin/bash "$ws" --resume
check_screen "--resume asks again" "Continue which (1-2"
type_line 2
check_screen "picking 2 continues that conversation" "Continuing the conversation $first_id"
wait_for_prompt
print_in "$ws" --resume "$first_id" --print -p "meanwhile"
check "a second Caretz cannot write the same conversation" test "$RC" -eq 1
check "... and says so" contains "$STDERR" "another Caretz is still writing the conversation"
type_line "picked"
check_screen "the picked conversation answers" "ANSWER-PICKED"
check "its request holds its own first prompt" test "$(first_user 10)" == \
    "remember: the failing host is db7"
check "... and not the other conversation's" not_contains "$(request 10)" "another topic"
wait_for_prompt
type_line "/quit"
check_screen "/quit leaves" "CARETZ-EXITED 0"

# --- After /quit: --resume by the start of the id. ---
print_in "$ws" --resume "${first_id:0:6}" --print -p "by id"
check "--resume ID --print exits 0" test "$RC" -eq 0
check "... and answers" test "$STDOUT" == "FINAL-BY-ID"
check "... with what was said before /quit" contains "$(request 11)" '"picked"'
transcript=$STATE/sessions/$first_id.jsonl
check "one transcript holds the whole conversation, each resume marked" \
    test "$(grep -c '"type":"resumed"' "$transcript")" -eq 4
check "... still readable by its owner only" test "$(stat -c %a "$transcript")" == 600

# --- No conversation, a damaged transcript. ---
empty=$(new_workspace)
print_in "$empty" --continue --print -p "x"
check "--continue where no conversation was started exits 1" test "$RC" -eq 1
check "... saying so" contains "$STDERR" "no conversation was started in $empty"
damaged=$(new_workspace)
runuser -u "$E2E_USER" -- sh -c "cat > '$STATE/sessions/0000damaged.jsonl'" <<EOF
{"type":"session","session_id":"0000damaged","provider":"openai","model":"e2e-model","base_url":"x","cwd":"$damaged","time":"2026-12-05T22:00:00Z"}
{"type":"user","agent":"main","text":"hello","time":"2026-12-05T22:00:01Z"}
{"type":"assistant","agent":"main","text":"cut off
EOF
print_in "$damaged" --continue --print -p "x"
check "a damaged transcript is an error" test "$RC" -eq 1
check "... naming the file and the line" \
    contains "$STDERR" "the transcript $STATE/sessions/0000damaged.jsonl is damaged at line 3"
check "... and nothing was sent to the model" test "$(request_count)" -eq 11
print_in "$ws" --continue acp
check "--continue with a subcommand is a usage error" test "$RC" -eq 2
rm -rf "$empty" "$damaged"

finish
