#!/usr/bin/env bash
# A full context in an ACP session, driven by the real client library: the server refuses a
# request past its window, Caretz compacts and sends it again by itself, the prompt ends with
# end_turn, the next prompt works, and the early fact still reaches the model.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
own_home
ws=$(new_workspace)
trap 'agent_cleanup; rm -rf "$ws"' EXIT
install_acp_client || { finish; exit; }
export MODEL_SERVER_CONTEXT=8000
DUMP="seq -f 'checkpoint %g complete on the replica' 3000"
start_model "{\"turns\": [
  {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"$DUMP\"}}]},
  {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"$DUMP\"}}]},
  {\"text\": \"DUMPS-READ\"},
  {\"text\": \"HELLO-AGAIN\"}
], \"summaries\": [{\"text\": \"SUMMARY: incident INC-7741 on db2-east.\"}]}"
model_env openai
cat >"$AGENT_TMP/scenario.json" <<EOF
{"cwd": "$ws", "steps": [
  {"prompt": "The incident is INC-7741. Dump the replica's log twice."},
  {"prompt": "hi"}
]}
EOF
chmod 0644 "$AGENT_TMP/scenario.json"
touch "$AGENT_TMP/events.jsonl"
chown "$E2E_USER" "$AGENT_TMP/events.jsonl"
E2E_ENV+=(ACP_SDK="$ACP_SDK")
as_user /bin/bash "$ws" timeout 120 node "$AGENT_TMP/acp_client.mjs" "$AGENT_TMP/scenario.json" \
    "$AGENT_TMP/events.jsonl" -- "$E2E_BIN" acp 2>"$AGENT_TMP/stderr.txt" </dev/null >/dev/null

events() {
    python3 - "$AGENT_TMP/events.jsonl" "$1" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if sys.argv[2] == "stops":
    print(" ".join(e.get("stopReason") or "error" for e in events
                   if e["event"] in ("stop", "prompt_error")))
elif sys.argv[2] == "errors":
    print("\n".join(e.get("text", "") for e in events if e["event"] == "console_error"))
PY
}
check "both prompts end their turn, the first after a refused request was compacted" \
    test "$(events stops)" == "end_turn end_turn"
check "the server refused one request, and nothing that large came again" refused_then_smaller
check "the next prompt's request holds the early fact" contains "$(last_body)" "INC-7741"
check "... and the newest result is whole" contains "$(last_body)" "checkpoint 3000 complete"
check "the client library logged no validation error" test -z "$(events errors)"
finish
