#!/usr/bin/env bash
# What the model API can do wrong, in the format given as $1 (openai or anthropic): a bad
# key, 429 then success, 500 until Caretz gives up, a stream cut in the middle of a tool call,
# invalid JSON in a tool call's arguments, a page that is no event stream, a stall, and no
# server at all. Each gives one clear line, and the session goes on to answer the next prompt.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
PROVIDER=$1
own_home
ws=$(new_workspace)
trap 'agent_cleanup; rm -rf "$ws"' EXIT

start_model "$(
    cat <<'EOF_SCRIPT'
[
  {"status": 401, "body": {"error": {"message": "Incorrect API key provided"}}},
  {"status": 429, "retry_after": "1", "body": {"error": {"message": "slow down"}}},
  {"text": "AFTER-429"},
  {"status": 500, "retry_after": "0", "body": {"error": {"message": "boom"}}},
  {"status": 500, "retry_after": "0", "body": {"error": {"message": "boom"}}},
  {"status": 500, "retry_after": "0", "body": {"error": {"message": "boom"}}},
  {"status": 500, "retry_after": "0", "body": {"error": {"message": "boom"}}},
  {"cut": true, "tool_calls": [{"name": "shell", "arguments": {"command": "touch cut-ran"}}]},
  {"tool_calls": [{"name": "shell", "arguments": "{\"command\": \"touch json-ran\""}]},
  {"text": "RECOVERED"},
  {"raw": "<html><body>It works!</body></html>"},
  {"text": "partial", "hang": 5},
  {"text": "STILL-ALIVE"}
]
EOF_SCRIPT
)"
model_env "$PROVIDER"
E2E_ENV+=(CARETZ_STALL_TIMEOUT=2)
printf '%s\n' first second third fourth fifth sixth seventh eighth >"$AGENT_TMP/stdin"
start=$SECONDS
STDOUT=$(as_user /bin/bash "$ws" "$E2E_BIN" --provider "$PROVIDER" 2>"$AGENT_TMP/stderr" <"$AGENT_TMP/stdin")
RC=$?
STDERR=$(cat "$AGENT_TMP/stderr")

check "401: says the key was rejected, with the server's words and the variables to check" \
    contains "$STDERR" "rejected the API key (HTTP 401: Incorrect API key provided); check"
check "429: says it tries again after the server's Retry-After" \
    contains "$STDERR" "the model API answered HTTP 429; trying again in 1 s (attempt 2 of 4)"
check "... then the answer comes" contains "$STDOUT" "AFTER-429"
check "500: gives up after 4 attempts, saying so" \
    contains "$STDERR" "the model API failed after 4 attempts (HTTP 500: boom); try again later"
check "a stream cut in the middle of a tool call says it was cut off" \
    contains "$STDERR" "the model's answer was cut off before it finished"
check "... and the half-streamed call does not run" test ! -e "$ws/cut-ran"
check "invalid JSON in a tool call's arguments is reported" \
    contains "$STDERR" "the model's shell call was not run: its arguments are not a valid JSON object"
check "... the model is told, and nothing ran" contains "$(tool_result 10)" "nothing ran"
check "... so the command did not run" test ! -e "$ws/json-ran"
check "... and the model's next answer comes" contains "$STDOUT" "RECOVERED"
check "a page that is no event stream is reported" \
    contains "$STDERR" "did not answer with an event stream; check --base-url"
check "a stall is given up after the stall timeout" \
    contains "$STDERR" "the model API stopped sending in the middle of its answer; gave up after 2 s"
check "after all of that the session answers the next prompt" contains "$STDOUT" "STILL-ALIVE"
check "every request arrived as expected" test "$(request_count)" -eq 13
check "failed turns make the exit status non-zero" test "$RC" -eq 1
check "the errors take no longer than their waits" test $((SECONDS - start)) -lt 20
check "no error message shows the API key" not_contains "$STDOUT$STDERR" "$API_KEY"
check "nothing crashed" not_contains "$STDERR" "terminate called"

stop_model
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
E2E_ENV=(CARETZ_BASE_URL="http://127.0.0.1:$port/v1" CARETZ_API_KEY="$API_KEY")
printf '%s\n' "hello" "!echo the session goes on" >"$AGENT_TMP/stdin"
OUT=$(as_user /bin/bash "$ws" "$E2E_BIN" --provider "$PROVIDER" 2>&1 <"$AGENT_TMP/stdin")
check "no server at all: says it cannot reach the model API and where" \
    contains "$OUT" "cannot reach the model API at http://127.0.0.1:$port/v1"
check "... and the session goes on" contains "$OUT" "the session goes on"

finish
