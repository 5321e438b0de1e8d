#!/usr/bin/env bash
# Refusals a tool hides by doing without (DESIGN.md section 5): with the user's kubeconfig and
# git credentials on the host, hidden in the sandbox, kubectl falls back to localhost:8080 and
# git asks for a username instead of failing with "No such file or directory". Caretz knows that
# kubectl and git ran (its stand-in records them) and reports a hidden refusal naming the store;
# in tmux with --ask-sandbox-off, Allow once runs the command on the host against a stand-in
# server on 127.0.0.1, whose log shows the host run's requests. Printing a fallback line runs
# no tool and asks nothing; a visible kubeconfig whose server is unreachable asks nothing.
# As the unprivileged test user, in a home of the test's own.
# Argument: session (the default) or fresh (--no-session).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-session}"
SH=/bin/bash
HERE=$(cd "$(dirname "$0")" && pwd)

own_home
work=$(mktemp -d /tmp/caretz-credfall.XXXXXX)
server_pid=
cleanup() {
    end_tmux
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null
    rm -rf "$TEST_HOME" "$work"
}
trap cleanup EXIT
ws=$TEST_HOME/ws
u mkdir -p "$ws"

# --- the stand-in servers: the Kubernetes API and a git repository that wants credentials ----
secret="s3cret-$$"
python3 "$HERE/credential_server.py" "$work/port" "$work/requests.log" "ops:$secret" &
server_pid=$!
for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
port=$(cat "$work/port")
check "the stand-in server listens" test -n "$port"
touch "$work/requests.log"
chmod 755 "$work"
chmod 644 "$work/requests.log"

# git's server by a name of its own, which this test's /etc/hosts gives 127.0.0.1 in a mount
# namespace of its own (parallel tests keep the machine's /etc/hosts). Caretz's proxy, which
# resolves names for the sandbox, and the host rerun run in that namespace.
git_host=git.credfall.test
{ echo "127.0.0.1 $git_host"; cat /etc/hosts; } >"$work/hosts"
chmod 644 "$work/hosts"
repo_url="http://$git_host:$port/app.git"

# The user's stores on the host: a kubeconfig naming the stand-in API server, git's credential
# store holding the password; the proxy lets the sandbox reach git's server.
write() {  # FILE CONTENT: a file of the user's
    u mkdir -p "$(dirname "$1")"
    printf '%s\n' "$2" | u tee "$1" >/dev/null
}
write "$TEST_HOME/.kube/config" "apiVersion: v1
kind: Config
clusters:
- cluster: {server: \"http://127.0.0.1:$port\"}
  name: standin
contexts:
- context: {cluster: standin, user: ops}
  name: standin
current-context: standin
users:
- name: ops
  user: {token: token-$$}"
write "$TEST_HOME/.gitconfig" $'[credential]\n\thelper = store'
write "$TEST_HOME/.git-credentials" "http://ops:$secret@$git_host:$port"
u chmod 600 "$TEST_HOME/.git-credentials" "$TEST_HOME/.kube/config"
config=$TEST_HOME/.config/caretz/config.json
write "$config" "{\"sandbox\": {\"allowed_domains\": [\"$git_host\"]}}"

# The command line, for sh, that runs LINE (a command line of the test user's) with the
# test's /etc/hosts.
with_test_hosts() {
    printf 'unshare -m sh -c %q' "mount --bind $work/hosts /etc/hosts && exec $1"
}
# caretz_here ARGS...: Caretz as the test user in the workspace (OUT and RC as caretz_as_user).
caretz_here() {
    OUT=$(sh -c "$(with_test_hosts "$(user_command_line "$SH" "$ws" "$E2E_BIN $(printf '%q ' "$@")")")" 2>&1 </dev/null)
    RC=$?
}
requests() { grep -c "$1" "$work/requests.log"; }
refusals_of() {  # the refusals of exec --json's line in OUT, as "kind subject" lines
    printf '%s\n' "$OUT" | grep '^{' | python3 -c '
import json, sys
for r in json.load(sys.stdin)["refusals"]:
    print(r["kind"], r["subject"])'
}

# --- exec --json: the silent fallbacks are hidden refusals naming the store -----------------
caretz_here exec "${MODE[@]}" --json 'kubectl get pods'
check "kubectl in the sandbox falls back to localhost:8080" \
    contains "$OUT" "The connection to the server localhost:8080 was refused"
check "... and never reaches the server its kubeconfig names" test "$(requests pods)" -eq 0
check "exec --json reports a hidden refusal naming ~/.kube/config" \
    test "$(refusals_of)" = "hidden $TEST_HOME/.kube/config"

caretz_here exec "${MODE[@]}" --json "git ls-remote $repo_url"
check "git in the sandbox reaches the server and asks for a username" \
    contains "$OUT" "could not read Username for 'http://$git_host:$port'"
check "... without credentials" test "$(requests 'auth=yes')" -eq 0
check "exec --json reports a hidden refusal naming ~/.git-credentials" \
    test "$(refusals_of)" = "hidden $TEST_HOME/.git-credentials"

# --- the same lines without the tools ask nothing ----------------------------------------------
caretz_here exec "${MODE[@]}" --json \
    "echo 'The connection to the server localhost:8080 was refused - did you specify the right host or port?'; echo \"fatal: could not read Username for 'http://$git_host': x\"; exit 1"
check "printing the fallback lines without running the tools is no refusal" \
    test -z "$(refusals_of)"
caretz_here exec "${MODE[@]}" --json 'kubectl get pods 2>&1 | tail -1 > k.log; cat k.log; exit 1'
check "a kubectl that ran, whose fallback line the command prints later, still counts" \
    test "$(refusals_of)" = "hidden $TEST_HOME/.kube/config"
caretz_here exec "${MODE[@]}" --json "git ls-remote http://$git_host:$port/missing"
check "git with a wrong URL is no refusal" test -z "$(refusals_of)"
check "... it failed for its own reason" contains "$OUT" "not found"

# A kubeconfig given back with sandbox.visible: kubectl reads it, its server is unreachable
# from inside (the sandbox has its own network), and that is no refusal.
write "$config" "{\"sandbox\": {\"allowed_domains\": [\"$git_host\"], \"visible\": [\"~/.kube\"]}}"
caretz_here exec "${MODE[@]}" --json 'kubectl get pods'
check "with ~/.kube visible, kubectl talks to the kubeconfig's server" \
    contains "$OUT" "The connection to the server 127.0.0.1:$port was refused"
check "... and an unreachable server is no refusal" test -z "$(refusals_of)"
write "$config" "{\"sandbox\": {\"allowed_domains\": [\"$git_host\"]}}"

# The stand-in keeps the tools' output and status exactly: the same as the real ones', kept
# read-only under /.caretz/real/NAME.
caretz_here exec "${MODE[@]}" 'same() { p=$(command -v "$1"); shift; real=/.caretz/real/${p##*/}$(readlink -f "$p"); a=$("$p" "$@" 2>&1; echo "status $?"); b=$("$real" "$@" 2>&1; echo "status $?"); [ "$a" = "$b" ] && [ -x "$real" ] && echo "same: $a"; }; same kubectl version --client; same git --version; same git no-such-command'
check "the stand-in gives kubectl's own output and status" contains "$OUT" "same: Client Version:"
check "... git's" contains "$OUT" "same: git version"
check "... and git's failure status" contains "$OUT" "is not a git command"
check "... all three" test "$(printf '%s\n' "$OUT" | grep -c '^same: ')" -eq 3

# --- in tmux: the offer, and Allow once runs the tool on the host -----------------------------
start_pane "$(with_test_hosts "$(user_command_line "$SH" "$ws" "$E2E_BIN --ask-sandbox-off ${MODE[*]}; echo CARETZ-EXITED; sleep 600")")"
check "Caretz starts in tmux" wait_for_screen "caretz>" 20

pods_before=$(requests 'pods?')
check "kubectl get pods opens the offer" ask "kubectl get pods" 60
check "... naming the hidden kubeconfig" wait_for_screen "hidden: $TEST_HOME/.kube/config" 2
check "... with kubectl's fallback line as evidence" \
    wait_for_screen "The connection to the server localhost:8080 was refused" 1
tmux_ send-keys -t main o
check "Allow once runs kubectl on the host" wait_for_screen "No resources found in default namespace." 60
prompt_back 60
check "... which asked the stand-in API server for the pods" \
    test "$(requests 'GET /api/v1/namespaces/default/pods')" -gt "$pods_before"

# git asks for what its credential store would have answered: on the session's terminal it
# prompts, and answered with nothing the server refuses it; a fresh sandbox's command has no
# controlling terminal, and git fails at once with "could not read Username".
offers=$(count_lines "Allow once")
type_command "git ls-remote $repo_url"
asked=0
deadline=$((SECONDS + 90))
while ((SECONDS < deadline)) && (($(count_lines "Allow once") <= offers)); do
    last=$(screen_text | grep -v '^[[:space:]]*$' | tail -1)
    if [[ $last == "Username for 'http://$git_host:$port':"* || $last == "Password for 'http://"*"$git_host:$port':"* ]]; then
        asked=$((asked + 1))
        tmux_ send-keys -t main Enter
        sleep 0.5
    fi
    sleep 0.2
done
if [[ $MODE_NAME == session ]]; then
    check "in a session, git asks for a username on the terminal" test "$asked" -ge 1
fi
check "git ls-remote opens the offer" test "$(count_lines "Allow once")" -gt "$offers"
check "... naming ~/.git-credentials" wait_for_screen "hidden: $TEST_HOME/.git-credentials" 2
tmux_ send-keys -t main o
check "Allow once runs git on the host, with the stored credentials" \
    wait_for_screen "refs/heads/main" 60
prompt_back 60
check "... the server saw the credentials" test "$(requests 'info/refs?service=git-upload-pack auth=yes')" -ge 1

finish
