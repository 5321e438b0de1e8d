#!/usr/bin/env bash
# The machine-wide layer as the unprivileged test user: /etc/caretz/config.json's standing rule
# (sandbox_off.always_allow) reruns a refused command outside without an offer, audited as
# config_allowance, with the usual note to the model and nothing of the rule told to it; a
# workspace's config naming a rule is not read, and says so; /etc/caretz/policy.json refuses
# every attempt to go past it (flag, profile, config) naming the key and the policy file, adds
# what it hides, and stops Caretz when it is malformed or others than root may change it.
# /etc/caretz is written only in a mount namespace of the test's own (private_etc_caretz).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
private_etc_caretz "$0" "$@"
source "$(dirname "$0")/agent_lib.sh"

export TEST_HOME
own_home
trap 'agent_cleanup; umount /etc/caretz; rm -rf "$ETC" "$TEST_HOME"' EXIT
ws=$TEST_HOME/ws
out=$TEST_HOME/outside  # the user may write it; the sandbox may not
u mkdir -p "$ws" "$out" "$TEST_HOME/.config/caretz"
audit=$TEST_HOME/.local/state/caretz/audit.jsonl
user_config=$TEST_HOME/.config/caretz/config.json
tag="e2e$$"
offer_heading="The sandbox refused this command"

# admin_file NAME JSON: a file of the administrator's in /etc/caretz, root's and mode 644.
admin_file() {
    printf '%s\n' "$2" >"/etc/caretz/$1"
    chmod 0644 "/etc/caretz/$1"
}
# audit_decision COMMAND: the decision of the last offer line about COMMAND.
audit_decision() {
    python3 - "$audit" "$1" <<'PY'
import json, sys
import os
lines = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
offers = [l for l in lines if l.get("event") == "offer" and l["command"] == sys.argv[2]]
print(offers[-1]["decision"] if offers else "none")
PY
}
rerun_logged() { grep -F '"event":"rerun_finished"' "$audit" 2>/dev/null | grep -qF "$1"; }

# --- a standing rule in the machine-wide config -----------------------------------------------
standing="touch $out/standing"
secret_rule="systemctl restart never-told-$tag"
admin_file config.json "{\"sandbox_off\": {\"always_allow\": [\"$standing\", \"$secret_rule\"]}}"
start_model "$(
    cat <<EOF
[
  {"text": "Trying it.", "tool_calls": [{"name": "shell", "arguments": {"command": "$standing"}}]},
  {"text": "ANSWER-ONE: done."},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "touch $out/asked"}}]},
  {"text": "ANSWER-TWO: no luck."}
]
EOF
)"
model_env openai
tmux_caretz /bin/bash "$ws" --ask-sandbox-off -p "make the standing file"
check_screen "the model's refused command in the standing rule finishes its turn" "ANSWER-ONE" 30
check "... without an offer" not_contains "$(whole_screen)" "$offer_heading"
check "... having run outside the sandbox: the file exists" test -e "$out/standing"
check "the audit log records it as config_allowance" \
    test "$(audit_decision "$standing")" == config_allowance
check "... and the rerun's end" rerun_logged "$standing"
result=$(tool_result 2)
check "the model's tool result starts with the outside-the-sandbox note" \
    contains "$(head -1 <<<"$result")" "ran OUTSIDE the sandbox"
check "... then the host run's exit status" test "$(sed -n 2p <<<"$result")" == "exit status: 0"
check "no request to the model names a rule it did not run" \
    not_contains "$(all_requests)" "never-told-$tag"
check "... nor the config key" not_contains "$(all_requests)" "always_allow"
check "the system prompt does not name the standing rule" \
    not_contains "$(system_of 1)" "$standing"

type_line "make the asked file"
check_screen "a command without a rule gets the offer" "$offer_heading"
check "... with its three choices" \
    contains "$(screen_text)" "[o] Allow once   [s] Allow for session   [d] Deny"
keys Enter
check_screen "Enter denies it as usual" "ANSWER-TWO"
check "... so nothing ran outside" test ! -e "$out/asked"
type_line "/quit"
check_screen "/quit leaves Caretz" "CARETZ-EXITED 0"
stop_model
E2E_ENV=()
rm -f /etc/caretz/config.json

# --- the user's own config holds standing rules too; a workspace's does not -------------------
# exec_in_pane COMMAND: `caretz exec --ask-sandbox-off COMMAND` on a terminal in the workspace.
exec_in_pane() {
    start_pane "$(user_command_line /bin/bash "$ws" "$E2E_BIN exec --ask-sandbox-off $(printf %q "$1"); echo EXEC-DONE \$?; sleep 600")"
}
echo "{\"sandbox_off\": {\"always_allow\": [\"touch $out/user-rule\"]}}" | u tee "$user_config" >/dev/null
exec_in_pane "touch $out/user-rule"
check_screen "a rule in the user's config: caretz exec finishes" "EXEC-DONE 0" 30
check "... without an offer" not_contains "$(whole_screen)" "$offer_heading"
check "... having run outside" test -e "$out/user-rule"
check "... audited as config_allowance" test "$(audit_decision "touch $out/user-rule")" == config_allowance
rm -f "$user_config"

u mkdir -p "$ws/.caretz"
echo "{\"sandbox_off\": {\"always_allow\": [\"touch $out/ws-rule\"]}}" | u tee "$ws/.caretz/config.json" >/dev/null
exec_in_pane "touch $out/ws-rule"
check_screen "a rule in a workspace's config is not followed: the offer appears" "$offer_heading" 30
check "... and Caretz says the workspace's config is not read" \
    contains "$(whole_screen | tr -d '\n')" "$ws/.caretz/config.json is not read"
tmux_ send-keys -t main Enter
check_screen "Enter denies" "EXEC-DONE 1" 30
check "... so nothing ran outside" test ! -e "$out/ws-rule"
check "... audited as deny" test "$(audit_decision "touch $out/ws-rule")" == deny
rm -rf "$ws/.caretz"

# --- the policy refuses what goes past it ------------------------------------------------------
run() { caretz_as_user /bin/bash "$ws" "$@"; }
policy=/etc/caretz/policy.json
names() { [[ $OUT == *"$1"* && $OUT == *"$policy"* ]]; }
refused() {  # WHAT TEXT: the last run stopped with status 2, saying TEXT and naming the policy
    check "$1: refused with status 2" test "$RC" -eq 2
    check "$1: the message says '$2' and names $policy" names "$2"
    check "$1: nothing ran" not_contains "$OUT" "RAN-$tag"
}
admin_file policy.json '{"ask_sandbox_off": false, "allow_docker": false, "permission_timeout": "5m",
  "sandbox": {"allowed_domains": ["*.debian.org"], "hidden": ["~/team-secret"]}}'

run exec --ask-sandbox-off "echo RAN-$tag"
refused "--ask-sandbox-off under a policy that turns it off" "--ask-sandbox-off goes past the machine policy"
run --profile ops exec "echo RAN-$tag"
refused "the built-in ops profile" 'built-in profile "ops": "ask_sandbox_off"'
run exec --allow-docker "echo RAN-$tag"
refused "--allow-docker" "--allow-docker"
run exec --permission-timeout 1h "echo RAN-$tag"
refused "--permission-timeout above the policy's" "--permission-timeout 1h"
echo '{"profiles": {"loose": {"allow_docker": true}}}' | u tee "$user_config" >/dev/null
run --profile loose exec "echo RAN-$tag"
refused "a profile of the user's" "profile \"loose\" in $user_config: \"allow_docker\""
echo '{"sandbox": {"allowed_domains": ["github.com"]}}' | u tee "$user_config" >/dev/null
run exec "echo RAN-$tag"
refused "an allowed domain outside the policy's bound" "$user_config: \"sandbox.allowed_domains\" has \"github.com\""
E2E_ENV=(XDG_CONFIG_HOME="$TEST_HOME/elsewhere")
run exec --ask-sandbox-off "echo RAN-$tag"
refused "a variable that moves the user's config does not move the policy" "--ask-sandbox-off"
E2E_ENV=()
rm -f "$user_config"

admin_file config.json "{\"sandbox_off\": {\"always_allow\": [\"$standing\"]}}"
run exec "echo RAN-$tag"
refused "a standing rule while the policy turns the offer off" \
    "/etc/caretz/config.json: \"sandbox_off.always_allow\""
rm -f /etc/caretz/config.json

u mkdir -p "$TEST_HOME/team-secret"
echo "token-$tag" | u tee "$TEST_HOME/team-secret/token" >/dev/null
run exec "cat ~/team-secret/token; echo RAN-$tag"
check "within the policy Caretz runs" contains "$OUT" "RAN-$tag"
check "... and what the policy hides looks missing" contains "$OUT" "team-secret/token: No such file or directory"
check "... never read" not_contains "$OUT" "token-$tag"

# --- a policy Caretz cannot trust or understand stops it ---------------------------------------
chmod 0664 "$policy"
run exec "echo RAN-$tag"
refused "a group-writable policy" "$policy: users other than root may change it"
chmod 0644 "$policy"
chown "$E2E_USER" "$policy"
run exec "echo RAN-$tag"
refused "a policy the user owns" "$policy: users other than root"
chown root "$policy"
admin_file policy.json '{"ask_sandbox_off": false, "sandbox": {"writable": ["/"]}}'
run exec "echo RAN-$tag"
refused "a policy with a key it cannot hold" "\"sandbox.writable\" cannot be set here"
admin_file policy.json '{"ask_sandbox_off": false'
run exec "echo RAN-$tag"
refused "a malformed policy" "not valid JSON"
rm -f "$policy"
run exec --ask-sandbox-off "echo RAN-$tag"
check "without a policy, --ask-sandbox-off is the user's again" contains "$OUT" "RAN-$tag"

# --- the policy's sandbox.allowed_domains bounds the network approval too ----------------------
# A server on the host's loopback: "127.0.0.1" is within the bound, "localhost" is not.
web=$(mktemp -d /tmp/caretz-e2e-policy-web.XXXXXX)
echo "hello-$tag" >"$web/hello.txt"
chmod -R a+rX "$web"
python3 -u -m http.server --bind 127.0.0.1 --directory "$web" 0 >"$web/log" 2>&1 &
web_pid=$!
trap 'kill $web_pid 2>/dev/null; rm -rf "$web"; agent_cleanup; umount /etc/caretz; rm -rf "$ETC" "$TEST_HOME"' EXIT
for _ in $(seq 100); do grep -q 'port [0-9]' "$web/log" && break; sleep 0.1; done
port=$(grep -o 'port [0-9]*' "$web/log" | head -1 | cut -d' ' -f2)
fetch="curl --noproxy '' -sS -m 20 -w ' HTTP-%{http_code}\n'"
echo '{"sandbox": {"allowed_domains": ["127.0.0.1"]}}' | u tee "$user_config" >/dev/null
network_decision() {  # HOST: the last network decision about HOST:$port
    python3 - "$audit" "$1" "$port" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if '"event":"network"' in l]
found = [l["decision"] for l in lines if l["host"] == sys.argv[2] and l["port"] == int(sys.argv[3])]
print(found[-1] if found else "none")
PY
}

exec_in_pane "$fetch http://localhost:$port/hello.txt"
check_screen "without a policy, a destination outside the allowed list is asked about" \
    "wants to reach localhost:$port" 30
tmux_ send-keys -t main d
check_screen "... and denied with d" "HTTP-403" 30

admin_file policy.json '{"sandbox": {"allowed_domains": ["127.0.0.1"]}}'
run exec "$fetch http://127.0.0.1:$port/hello.txt"
check "within the policy's bound an allowed destination answers" contains "$OUT" "hello-$tag"
served=$(grep -c hello.txt "$web/log")
exec_in_pane "$fetch http://localhost:$port/hello.txt"
check_screen "outside the policy's bound the command gets a 403" "HTTP-403" 30
check "... without asking anyone" not_contains "$(whole_screen)" "wants to reach"
check "... saying it is denied" contains "$(whole_screen)" "is denied"
check "... recorded as denied_by_policy" test "$(network_decision localhost)" == denied_by_policy
check "... and the server never saw it" test "$(grep -c hello.txt "$web/log")" -eq "$served"
rm -f "$user_config" "$policy"

finish
