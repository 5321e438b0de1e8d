#!/usr/bin/env bash
# An incident-length session against a model server with a context window, speaking the format
# given as $1 (openai or anthropic), which answers HTTP 400 past the window as that provider
# does. After big command outputs fill the window, the request is compacted and sent again by
# itself, once, with a line on the terminal; nothing the server refused is sent twice; the next
# prompt works; a fact given early still reaches the model. The same with --print, and with a
# window Caretz knows beforehand (model.context_window: compacted before anything is refused).
# /compact and /clear do what they say, /status and /model too; a one-letter key hides itself
# and leaves "tokens" whole.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
PROVIDER=$1
own_home
ws=$(new_workspace)
trap 'agent_cleanup; rm -rf "$ws"' EXIT
export MODEL_SERVER_CONTEXT=8000
FACT="the incident is INC-7741 and the broken replica is db2-east"
# About 110 KB of log; one result holds at most 16 KiB of it (some 4,000 tokens).
DUMP="seq -f 'checkpoint %g complete on the replica' 3000"

# print_run PROMPT: Caretz --print with PROMPT, without a terminal; sets STDOUT, STDERR and RC.
print_run() {
    STDOUT=$(as_user /bin/bash "$ws" "$E2E_BIN" --provider "$PROVIDER" --print -p "$1" \
        2>"$AGENT_TMP/stderr" </dev/null)
    RC=$?
    STDERR=$(cat "$AGENT_TMP/stderr")
}
last_summary_request() { grep '"summary": true' "$REQUESTS" | tail -1; }

script_with_dumps() {
    cat <<EOF
{"turns": [
  {"text": "Noted."},
  {"text": "First dump.", "tool_calls": [{"name": "shell", "arguments": {"command": "$DUMP"}}]},
  {"text": "Second dump.", "tool_calls": [{"name": "shell", "arguments": {"command": "$DUMP; echo LAST-LINE-OF-SECOND"}}]},
  {"text": "BOTH-DUMPS-READ: the checkpoints complete."},
  {"text": "HELLO-AFTER-COMPACTION"},
  {"text": "AFTER-COMPACT"},
  {"text": "AFTER-CLEAR"}
],
"summaries": [
  {"text": "SUMMARY-BY-MODEL: the user said $FACT. One log dump showed checkpoints completing."},
  {"text": "SUMMARY-BY-HAND: INC-7741 on db2-east."}
]}
EOF
}

# --- In tmux: the window unknown to Caretz until the server refuses a request.
start_model "$(script_with_dumps)"
model_env "$PROVIDER"
tmux_caretz /bin/bash "$ws" --provider "$PROVIDER" -p "Remember this: $FACT."
check_screen "the first prompt is answered" "Noted." 20
wait_for_prompt
type_line "dump the replica's log twice"
check_screen "a refused request is compacted and sent again by itself, with one line" \
    "caretz: the request did not fit the model's context window (8000 tokens): compacted the conversation, about" 30
check "... saying what it did" grep -q "tokens (older turns summarized by the model), and sent it again" <(whole_screen)
check "... in that one line alone" test "$(whole_screen | grep -c 'context window')" -eq 1
check_screen "... and the turn goes on to the model's answer" "BOTH-DUMPS-READ" 30
wait_for_prompt
type_line "hi"
check_screen "the next prompt works" "HELLO-AFTER-COMPACTION" 20
check "the server refused exactly one request, and nothing that large was sent again" refused_then_smaller
check "the summary was asked for once" test "$(sizes | grep -c summary)" -eq 1
last=$(last_body)
check "the last request still holds the early fact (its words or the summary)" contains "$last" "INC-7741"
check "... and the summary was the model's" contains "$last" "SUMMARY-BY-MODEL"
check "... and 'hi' is the latest user text" test "$(last_user "$(request_count)")" == "hi"
check "... and the second dump's end is still there" contains "$last" "LAST-LINE-OF-SECOND"
check "the transcript records the compaction" \
    grep -q '"type":"compaction"' "$TEST_HOME"/.local/state/caretz/sessions/*.jsonl

# /status: model, context, tokens spent, mode; /model changes the next requests' model.
type_line "/status"
check_screen "/status names the model and its API" "Model:        e2e-model ($PROVIDER API at $MODEL_URL/v1)" 10
check "... the context used, of the window the server stated" \
    contains "$(screen_text)" "of 8000 ("
check "... where the window came from" contains "$(screen_text)" "window from the server's error"
check "... the tokens spent" grep -qE 'Spent: +[1-9][0-9]* tokens in' <(screen_text)
check "... one compaction" contains "$(screen_text)" "1 compaction"
check "... the sandbox mode and the offer's flag" contains "$(screen_text)" "one sandbox session; --ask-sandbox-off off"
check "... and that no AGENTS.md was read" contains "$(screen_text)" "Instructions: no AGENTS.md file"
type_line "/model e2e-other-model"
check_screen "/model says which model the next requests go to" "The next requests go to e2e-other-model" 10

# /compact with what to keep, then /clear.
type_line "/compact keep the incident number"
check_screen "/compact compacts by hand" "older turns summarized by the model" 20
check "... asking the model to keep what the user named" \
    contains "$(last_summary_request)" "The user asks you to keep especially: keep the incident number"
type_line "go on"
check_screen "the conversation goes on after /compact" "AFTER-COMPACT" 20
body=$(last_body)
check "... from the summary" contains "$body" "SUMMARY-BY-HAND"
check "... with the model /model chose" contains "$body" '"model": "e2e-other-model"'
type_line "/clear"
check_screen "/clear says the sandbox session goes on" "Started a new conversation; the sandbox session" 10
type_line "fresh start"
check_screen "the next prompt is answered" "AFTER-CLEAR" 20
check "after /clear the model gets only the new prompt" \
    test "$(python3 - "$REQUESTS" <<'EOF'
import json, sys
body = [json.loads(l) for l in open(sys.argv[1]) if '"body"' in l][-1]["body"]
print(sum(1 for m in body["messages"] if m["role"] != "system"))
EOF
)" -eq 1
check "... and nothing of the old conversation" not_contains "$(last_body)" "INC-7741"
keys C-d
check_screen "Caretz exits" "CARETZ-EXITED 0" 10

# --- --print: the same overflow, the same recovery, the answer alone on stdout.
start_model "$(script_with_dumps | sed 's/{"text": "Noted."},//')"
model_env "$PROVIDER"
print_run "Remember this: $FACT. Then dump the replica's log twice."
check "--print: a refused request is compacted and retried, exit 0" test "$RC" -eq 0
check "... the final answer on stdout" test "$STDOUT" == "BOTH-DUMPS-READ: the checkpoints complete."
check "... the one line on stderr" test "$(grep -c 'did not fit the model.s context window (8000 tokens): compacted the conversation, about .*, and sent it again' <<<"$STDERR")" -eq 1
check "... nothing refused is sent twice" refused_then_smaller
check "... and the fact reached the last request" contains "$(last_body)" "INC-7741"

# --- A subagent's conversation fills the window: compacted and sent again the same way.
start_model "{\"turns\": [
  {\"tool_calls\": [{\"name\": \"task\", \"arguments\": {\"prompt\": \"The incident is INC-7741. Dump the log twice.\"}}]},
  {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"$DUMP\"}}]},
  {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"$DUMP\"}}]},
  {\"text\": \"SUBAGENT-DONE: INC-7741 dumps read\"},
  {\"text\": \"MAIN-DONE\"}
], \"summaries\": [{\"text\": \"SUMMARY: the subagent's task is about INC-7741.\"}]}"
model_env "$PROVIDER"
print_run "hand the dumps to a subagent"
check "a subagent's full context is compacted and its turn goes on: exit 0" test "$RC" -eq 0
check "... the main agent answers" test "$STDOUT" == "MAIN-DONE"
check "... the subagent's compaction is marked as the subagent's" \
    grep -q 'subagent 1.*did not fit the model.s context window.*and sent it again' <<<"$STDERR"
check "... nothing refused is sent twice" refused_then_smaller
check "... and the main agent got the subagent's answer" contains "$(last_body)" "SUBAGENT-DONE"

# --- A window Caretz knows (model.context_window): compacted before the server refuses.
runuser -u "$E2E_USER" -- mkdir -p "$TEST_HOME/.config/caretz"
echo '{"model": {"context_window": 8000}}' | runuser -u "$E2E_USER" -- tee "$TEST_HOME/.config/caretz/config.json" >/dev/null
calls=""
for i in 1 2 3 4 5 6 7 8 9 10; do
    calls+="{\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"$DUMP; echo DUMP-$i\"}}]},"
done
start_model "{\"turns\": [$calls {\"text\": \"TEN-DUMPS-READ\"}]}"
model_env "$PROVIDER"
print_run "Remember this: $FACT. Then dump the log ten times."
check "a known window: ten dumps in one turn end in the answer" test "$STDOUT" == "TEN-DUMPS-READ"
check "... the server refused nothing" not grep -q ' 400 ' <(sizes)
check "... Caretz compacted before the window filled" \
    contains "$STDERR" "compacted the conversation before it outgrew the model's context window (8000 tokens): about"
check "... each result was bounded to a tenth of the window" \
    contains "$(tool_result 2)" "bytes of output left out: a result holds at most"
last=$(last_body)
check "... old outputs were left out, keeping their last line" contains "$last" "Its last line was:"
check "... the newest output is whole" contains "$last" "DUMP-10"
check "... and the fact is still there" contains "$last" "INC-7741"
runuser -u "$E2E_USER" -- rm "$TEST_HOME/.config/caretz/config.json"

# --- A one-letter key: hidden where it stands as itself, "tokens" stays whole.
unset MODEL_SERVER_CONTEXT
start_model '[{"status": 400, "body": {"error": {"message": "too many tokens for key k; see k-docs"}}}]'
model_env "$PROVIDER"
E2E_ENV+=(CARETZ_API_KEY=k ANTHROPIC_API_KEY=k)
print_run "hello"
check "a one-letter key leaves other words whole" contains "$STDERR" "too many tokens for key (the key); see k-docs"
check "... never 'to(the key)ens'" not_contains "$STDERR" "to(the key)ens"

finish
