#!/usr/bin/env bash
# `caretz acp` driven by the real ACP client library (@zed-industries/agent-client-protocol
# 0.4.5, from npm) through acp_client.mjs, with the scripted model behind it. Caretz runs as
# the test user on a terminal of its own (script), so a rerun that kept the terminal would show.
# A refused command becomes session/request_permission with the three option kinds; Allow
# once reruns on the host with no terminal (tty: "not a tty", /dev/tty cannot be opened,
# sudo cannot ask); Allow for session skips the request for the identical command; Deny and a
# cancelled outcome leave the sandboxed result; session/cancel withdraws a waiting request and
# stops a running command and the model's stream. A second client then loads the session
# (session/load): the conversation comes back, shown to it, without the allowances. The library
# must log no validation error.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
own_home
ws=$(new_workspace)
out=$(new_outside_dir)
# What step 11's command changes: it makes a.txt and b.txt, removes c.txt, renames d.txt.
runuser -u "$E2E_USER" -- sh -c "printf c > '$ws/c.txt' && printf d > '$ws/d.txt'"
trap 'agent_cleanup; rm -rf "$ws" "$out"' EXIT

install_acp_client || { finish; exit; }

# A web server on the host for the network approval: `localhost` is on no allowed list.
web=$(mktemp -d /tmp/caretz-e2e-acp-web.XXXXXX)
echo "served-through-the-proxy" >"$web/net.txt"
python3 -c 'import functools, http.server, sys
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
    functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1]))
print(httpd.server_address[1], flush=True)
httpd.serve_forever()' "$web" >"$web/port" 2>/dev/null &
web_server=$!
trap 'kill $web_server; agent_cleanup; rm -rf "$ws" "$out" "$web"' EXIT
for _ in $(seq 50); do [[ -s $web/port ]] && break; sleep 0.1; done
web_port=$(cat "$web/port")
# curl bypasses the proxy for localhost (NO_PROXY) unless told otherwise.
fetch="curl -sS --noproxy '' -x http://127.0.0.1:3128 http://localhost:$web_port/net.txt"

shell() { printf '{"tool_calls": [{"name": "shell", "arguments": {"command": %s}}]}' "$(json_string "$1")"; }
json_string() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
no_tty_probe='tty; { : </dev/tty; } 2>/dev/null && echo TTY-OPENS || echo TTY-FAILS'
start_model "[
  $(shell "$no_tty_probe; touch $out/once"),
  {\"text\": \"DONE-ONCE\"},
  $(shell "touch $out/always"),
  $(shell "touch $out/always"),
  {\"text\": \"DONE-ALWAYS\"},
  $(shell "touch $out/denied"),
  {\"text\": \"DONE-DENIED\"},
  $(shell "touch $out/cancelled"),
  {\"text\": \"DONE-CANCELLED\"},
  $(shell "touch $out/turn-cancelled"),
  {\"tool_calls\": [{\"name\": \"shell\", \"arguments\": {\"command\": \"sh -c 'echo sleeping; exec sleep 31.$$'\"}},
                   {\"name\": \"shell\", \"arguments\": {\"command\": \"touch second-ran\"}}]},
  {\"text\": \"STREAMING\", \"hang\": 30},
  $(shell "sudo true"),
  {\"text\": \"DONE-SUDO\"},
  $(shell "echo LIVE-OUTPUT; sleep 1; echo END"),
  {\"text\": \"DONE-LIVE\"},
  $(shell "touch $out/long && sleep 32.$$"),
  $(shell "$fetch"),
  {\"text\": \"DONE-NET\"},
  $(shell "printf a > a.txt; printf b > b.txt; rm c.txt; mv d.txt e.txt; touch $out/changes"),
  {\"text\": \"DONE-CHANGES\"}
]"
model_env openai
cat >"$AGENT_TMP/scenario.json" <<EOF2
{"cwd": "$ws", "steps": [
  {"prompt": "allow once", "permission": "allow_once"},
  {"prompt": "allow for session", "permission": "allow_always"},
  {"prompt": "deny", "permission": "reject_once"},
  {"prompt": "cancelled outcome", "permission": "cancelled"},
  {"prompt": "cancel the turn while asked", "permission": "cancel_turn"},
  {"prompt": "cancel the running command", "cancel_on": "tool_call_update"},
  {"prompt": "cancel the stream", "cancel_on": "agent_message_chunk"},
  {"prompt": "sudo", "permission": "allow_once"},
  {"prompt": "live output"},
  {"prompt": "cancel the rerun", "permission": "allow_once", "cancel_after_permission_ms": 1500},
  {"prompt": "network", "permission": "allow_once"},
  {"prompt": "changes", "permission": "reject_once"}
]}
EOF2
chmod 0644 "$AGENT_TMP/scenario.json"
touch "$AGENT_TMP/events.jsonl" "$AGENT_TMP/stderr.txt"
chown "$E2E_USER" "$AGENT_TMP/events.jsonl" "$AGENT_TMP/stderr.txt"

# The client as the test user, on a terminal (script), spawning `caretz --ask-sandbox-off acp`.
runner=$AGENT_TMP/run-client.sh
{
    runner_header ACP_SDK="$ACP_SDK"
    printf 'as_user /bin/bash %q node %q %q %q -- %q --ask-sandbox-off acp 2>%q\n' "$ws" \
        "$AGENT_TMP/acp_client.mjs" "$AGENT_TMP/scenario.json" "$AGENT_TMP/events.jsonl" \
        "$E2E_BIN" "$AGENT_TMP/stderr.txt"
} >"$runner"
started=$SECONDS
timeout 90 script -qec "bash $runner" /dev/null </dev/null >/dev/null
echo "the client ran for $((SECONDS - started)) s"

# events QUERY ARGS...: answers questions about the client's event log.
events() {
    python3 - "$AGENT_TMP/events.jsonl" "$@" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
what, args = sys.argv[2], sys.argv[3:]
def in_step(i):
    step, out = None, []
    for e in events:
        if e["event"] == "prompt":
            step = e["index"]
        elif step == i:
            out.append(e)
    return out
if what == "stop":              # the stop reason of step N, or the prompt's error
    for e in in_step(int(args[0])):
        if e["event"] in ("stop", "prompt_error"):
            print(e.get("stopReason") or json.dumps(e["error"]))
elif what == "ms":              # how long step N took
    print(next(e["ms"] for e in in_step(int(args[0])) if e["event"] == "stop"))
elif what == "permissions":     # how many permission requests step N got
    print(sum(e["event"] == "permission" for e in in_step(int(args[0]))))
elif what == "option_kinds":    # the option kinds of step N's first permission request
    p = next(e for e in in_step(int(args[0])) if e["event"] == "permission")
    print(" ".join(o["kind"] for o in p["params"]["options"]))
elif what == "permission_text": # the text of step N's first permission request
    p = next(e for e in in_step(int(args[0])) if e["event"] == "permission")
    tc = p["params"]["toolCall"]
    print(tc.get("title"), tc.get("kind"), tc.get("status"))
    print("".join(c["content"]["text"] for c in tc.get("content") or []))
elif what == "updates":         # step N's session updates, one line each
    for e in in_step(int(args[0])):
        if e["event"] == "update":
            u = e["params"]["update"]
            content = "".join(c["content"]["text"] for c in u.get("content") or [] if isinstance(c, dict) and c.get("type") == "content") if isinstance(u.get("content"), list) else u.get("content", {}).get("text", "")
            print(u["sessionUpdate"], u.get("toolCallId", ""), u.get("kind", ""), u.get("status", ""), u.get("title", ""), json.dumps(content))
elif what == "console_errors":
    for e in events:
        if e["event"] in ("console_error", "client_error"):
            print(e.get("text") or e.get("error"))
elif what == "agent_exit":
    print(" ".join(str(e["code"]) for e in events if e["event"] == "agent_exit"))
PY
}
audit="$TEST_HOME/.local/state/caretz/audit.jsonl"
# requests_after PROMPT: how many model requests came with PROMPT as the last user message.
requests_after() {
    python3 - "$REQUESTS" "$1" <<'PY'
import json, sys
count = 0
for line in open(sys.argv[1]):
    users = [m for m in json.loads(line)["body"]["messages"] if m["role"] == "user"]
    count += bool(users) and users[-1]["content"] == sys.argv[2]
print(count)
PY
}
decisions() { grep -F "\"command\":\"$1\"" "$audit" | grep -o '"decision":"[a-z_]*"' | cut -d'"' -f4 | tr '\n' ' '; }

check "the client library logged no validation or other error" test -z "$(events console_errors)"
[[ -n "$(events console_errors)" ]] && events console_errors | head -5
check "caretz acp ended with status 0 when its input closed" test "$(events agent_exit)" == 0
check "the run took less than a minute" test $((SECONDS - started)) -lt 60

# Step 0: Allow once.
check "a refused command's turn ends normally" test "$(events stop 0)" == end_turn
check "the refusal produced one permission request" test "$(events permissions 0)" == 1
check "... with the options allow_once, allow_always, reject_once" \
    test "$(events option_kinds 0)" == "allow_once allow_always reject_once"
text=$(events permission_text 0)
check "... about the command's tool call (kind execute, pending)" contains "$text" "touch $out/once execute pending"
check "... showing what was refused" contains "$text" "write: $out/once"
check "... and that the sandboxed attempt already ran, changing nothing in the workspace" \
    contains "$text" "The sandboxed attempt already ran. It changed nothing in the workspace."
updates=$(events updates 0)
check "the command showed as an execute tool call in progress" \
    contains "$updates" "tool_call call-1 execute in_progress $no_tty_probe; touch $out/once"
check "... then completed, with the result as its content" \
    grep -q "^tool_call_update call-1  completed .*ran OUTSIDE the sandbox.*TTY-FAILS" <<<"$updates"
check "the model's answer came as agent_message_chunk" contains "$updates" 'agent_message_chunk'
check "Allow once reran the command on the host: the file exists" test -e "$out/once"
result=$(tool_result 2)
check "the model's next request starts with the outside-the-sandbox note" \
    contains "$(head -1 <<<"$result")" "ran OUTSIDE the sandbox"
check "the rerun had no terminal: tty says \"not a tty\"" contains "$result" "not a tty"
check "... and /dev/tty cannot be opened (no controlling terminal)" contains "$result" TTY-FAILS
check "the audit log has allow_once and the rerun's exit" \
    test "$(decisions "$no_tty_probe; touch $out/once")" == "allow_once "
check "... and a rerun_finished line with exit status 0" \
    grep -qF '"event":"rerun_finished","rerun_exit":0' <(grep -F "touch $out/once" "$audit")

# Step 1: Allow for session, then the identical command runs outside without a request.
check "Allow for session: one permission request for two identical commands" \
    test "$(events permissions 1)" == 1
check "... both ran on the host" test "$(tool_result 4 | head -1)" == "$(tool_result 5 | head -1)"
check "... the second result carries the outside note too" contains "$(tool_result 5)" "ran OUTSIDE the sandbox"
check "the audit log has allow_session, then session_allowance" \
    test "$(decisions "touch $out/always")" == "allow_session session_allowance "
check "the turn ended normally" test "$(events stop 1)" == end_turn

# Steps 2 and 3: Deny and the cancelled outcome leave the sandboxed result.
for step in 2:denied:reject_once:7 3:cancelled:cancelled:9; do
    IFS=: read -r n name answer request <<<"$step"
    check "$answer: one permission request" test "$(events permissions "$n")" == 1
    check "$answer: nothing ran outside" test ! -e "$out/$name"
    check "$answer: the model gets exactly the sandboxed result" test "$(tool_result "$request")" == \
        "exit status: 1
touch: cannot touch '$out/$name': Read-only file system"
    check "$answer: the audit log says deny" test "$(decisions "touch $out/$name")" == "deny "
    check "$answer: the tool call failed (exit 1)" grep -q "^tool_call_update call-[0-9]*  failed" <<<"$(events updates "$n")"
done

# Step 4: session/cancel while the request waits, unanswered.
check "session/cancel during a permission request ends the turn with cancelled" \
    test "$(events stop 4)" == cancelled
check "... nothing ran outside" test ! -e "$out/turn-cancelled"
check "... the audit log says deny" test "$(decisions "touch $out/turn-cancelled")" == "deny "
check "... and the model was not asked again in that turn" test "$(requests_after "cancel the turn while asked")" == 1
check "a late answer to the withdrawn request is ignored" contains "$(cat "$AGENT_TMP/stderr.txt")" "an answer to no waiting request"

# Steps 5 and 6: session/cancel stops a running command (once its first output showed; the
# process that printed it is sleep) and the model's stream.
check "session/cancel during a command ends the turn with cancelled" test "$(events stop 5)" == cancelled
check "... within seconds (sleep 31.$$ was stopped)" test "$(events ms 5)" -lt 10000
check "... the command was stopped" test -z "$(pgrep -u "$E2E_USER" -f "sleep 31.$$")"
check "... and the turn's next tool call did not run" test ! -e "$ws/second-ran"
check "session/cancel during the model's stream ends the turn with cancelled" test "$(events stop 6)" == cancelled
check "... within seconds" test "$(events ms 6)" -lt 10000

# Step 7: sudo approved from ACP cannot ask for a password.
check "sudo's refusal asks too" test "$(events permissions 7)" == 1
result=$(tool_result 14)
check "the approved sudo ran outside with no terminal and failed as sudo does" \
    contains "$result" "a terminal is required"
check "... exit status 1" contains "$result" "exit status: 1"
check "... and the turn ended normally" test "$(events stop 7)" == end_turn

# Step 8: a command's output shows in its tool call while it runs.
check "output shows in the tool call while the command runs" \
    grep -qE '^tool_call_update call-[0-9]+ +"LIVE-OUTPUT' <<<"$(events updates 8)"
check "... and the final content is the whole result" \
    grep -qE '^tool_call_update call-[0-9]+  completed  "exit status: 0.*LIVE-OUTPUT.*END' <<<"$(events updates 8)"

# Step 9: session/cancel during an approved rerun stops it.
check "session/cancel during a rerun ends the turn with cancelled" test "$(events stop 9)" == cancelled
check "... within seconds" test "$(events ms 9)" -lt 10000
check "... the rerun had started on the host" test -e "$out/long"
check "... and was stopped" test -z "$(pgrep -u "$E2E_USER" -f "sleep 32.$$")"
check "... the audit log has its exit status (SIGTERM)" \
    grep -qF '"event":"rerun_finished","rerun_exit":143' <(grep -F "touch $out/long" "$audit")

# Step 10: a destination on no list: the network approval, as a permission request.
check "an unlisted destination asks through one permission request" test "$(events permissions 10)" == 1
check "... with its own options, of the three kinds" \
    test "$(events option_kinds 10)" == "allow_once allow_always reject_once"
check "... naming the host and port" contains "$(events permission_text 10)" "localhost:$web_port"
# Its result went with the next request, the last but the two of step 11.
check "... and allowed once, the download arrives" contains "$(tool_result "$(($(request_count) - 2))")" "served-through-the-proxy"
check "... the turn ends normally" test "$(events stop 10)" == end_turn
check "the audit log has the network decision" \
    grep -qF "\"event\":\"network\"" <(grep -F "\"port\":$web_port" "$audit" | grep -F allow_once)

check "nothing on Caretz's stderr came from a crash" not_contains "$(cat "$AGENT_TMP/stderr.txt")" "terminate called"

# Step 11: what the sandboxed attempt changed, in the text the editor shows.
text=$(events permission_text 11)
check "the permission request lists exactly what the sandboxed attempt changed" \
    contains "$text" "The sandboxed attempt already changed 4 files in the workspace:
    created  a.txt
    created  b.txt
    deleted  c.txt
    renamed  d.txt -> e.txt
Run it again OUTSIDE the sandbox?"
check "... and the audit line keeps it" \
    grep -qF "\"changed\":4,\"changed_first\":[\"created $ws/a.txt\",\"created $ws/b.txt\",\"deleted $ws/c.txt\",\"renamed $ws/d.txt -> $ws/e.txt\"]" <(grep -F "touch $out/changes" "$audit")

# session/load: a second client (a restarted editor) loads the session. The conversation comes
# back and is shown to the client; the sandbox session is new, and step 1's Allow for session
# ("touch $out/always") does not apply.
loaded_id=$(python3 -c 'import json, sys
print(next(e["sessionId"] for e in map(json.loads, open(sys.argv[1])) if e["event"] == "session"))' \
    "$AGENT_TMP/events.jsonl")
start_model "[$(shell "touch $out/always"), {\"text\": \"LOADED-ANSWER\"}]"
model_env openai
cat >"$AGENT_TMP/scenario.json" <<EOF2
{"cwd": "$ws", "load": "$loaded_id", "steps": [{"prompt": "after the load", "permission": "reject_once"}]}
EOF2
runner_header ACP_SDK="$ACP_SDK" >"$runner"
printf 'as_user /bin/bash %q node %q %q %q -- %q --ask-sandbox-off acp 2>%q\n' "$ws" \
    "$AGENT_TMP/acp_client.mjs" "$AGENT_TMP/scenario.json" "$AGENT_TMP/events.jsonl" \
    "$E2E_BIN" "$AGENT_TMP/stderr.txt" >>"$runner"
timeout 60 script -qec "bash $runner" /dev/null </dev/null >/dev/null
replayed=$(python3 -c 'import json, sys
for e in map(json.loads, open(sys.argv[1])):
    if e["event"] == "prompt": break
    if e["event"] == "update":
        u = e["params"]["update"]
        print(u["sessionUpdate"], json.dumps(u.get("content", {}).get("text", "") if isinstance(u.get("content"), dict) else ""))' \
    "$AGENT_TMP/events.jsonl")
check "the client library accepts session/load and every update, with no validation error" \
    eval '[[ -z $(events console_errors) ]] && grep -q "\"event\":\"loaded\"" "$AGENT_TMP/events.jsonl"'
check "session/load shows the earlier prompts to the client" \
    contains "$replayed" 'user_message_chunk "allow once"'
check "... and the earlier commands as tool calls" contains "$replayed" "tool_call_update"
check "the loaded session's next request holds the earlier conversation" \
    test "$(first_user 1)" == "allow once"
check "... and the new prompt" test "$(last_user 1)" == "after the load"
check "Allow for session did not carry over: the same command asks again" \
    test "$(events permissions 0)" == 1
check "... and the loaded session's turn ends" test "$(events stop 0)" == end_turn
finish
