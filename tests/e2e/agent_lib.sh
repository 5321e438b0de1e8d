# Helpers for the agent's end-to-end tests (sourced after lib.sh): a scripted model server
# (model_server.py), Caretz in tmux as the test user, and what the model was sent.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODEL_SERVER=$E2E_DIR/model_server.py
# The key Caretz sends the model API. No command may ever see it.
API_KEY=sk-e2e-Secret-Key-8675309
AGENT_TMP=$(mktemp -d /tmp/caretz-agent-e2e.XXXXXX)
chmod 0755 "$AGENT_TMP"
TMUX_SOCKET=caretz-agent-e2e-$$
MODEL_PID=
REQUESTS=$AGENT_TMP/requests.jsonl

agent_cleanup() {
    end_tmux
    stop_model
    rm -rf "$AGENT_TMP"
}

# start_model SCRIPT_JSON: serves the turns of SCRIPT_JSON; sets MODEL_URL (base, no /v1).
start_model() {
    stop_model
    printf '%s' "$1" >"$AGENT_TMP/script.json"
    rm -f "$AGENT_TMP/port"
    python3 "$MODEL_SERVER" serve "$AGENT_TMP/script.json" "$AGENT_TMP/port" "$REQUESTS" &
    MODEL_PID=$!
    for _ in $(seq 100); do
        [[ -s $AGENT_TMP/port ]] && break
        sleep 0.05
    done
    MODEL_URL=http://127.0.0.1:$(cat "$AGENT_TMP/port")
}

stop_model() {
    if [[ -n $MODEL_PID ]]; then
        kill "$MODEL_PID" 2>/dev/null
        wait "$MODEL_PID" 2>/dev/null
    fi
    MODEL_PID=
}

# model_env PROVIDER: E2E_ENV for Caretz talking to the scripted model in that format.
model_env() {
    local base=$MODEL_URL/v1
    E2E_ENV=(CARETZ_BASE_URL="$base" CARETZ_API_KEY="$API_KEY" CARETZ_MODEL=e2e-model)
    [[ $1 == anthropic ]] && E2E_ENV+=(ANTHROPIC_API_KEY="$API_KEY")
}

# What the model was sent: the last tool result of request N, all of its tool results,
# the first and the last user text of request N, the system prompt of request N, how many came.
tool_result() { python3 "$MODEL_SERVER" tool-result "$REQUESTS" "$1"; }
tool_results() { python3 "$MODEL_SERVER" tool-results "$REQUESTS" "$1"; }
first_user() { python3 "$MODEL_SERVER" first-user "$REQUESTS" "$1"; }
last_user() { python3 "$MODEL_SERVER" last-user "$REQUESTS" "$1"; }
system_of() { python3 "$MODEL_SERVER" system "$REQUESTS" "$1"; }
request_count() { python3 "$MODEL_SERVER" count "$REQUESTS"; }
all_requests() { cat "$REQUESTS"; }

# sizes: one line per model request: its tokens, the HTTP status it got, turn or summary.
sizes() { python3 "$MODEL_SERVER" sizes "$REQUESTS"; }
# refused_then_smaller: exactly one request was refused as too large (400) and every request
# after it is within the window (MODEL_SERVER_CONTEXT), none refused again.
refused_then_smaller() {
    sizes | awk -v w="$MODEL_SERVER_CONTEXT" '
        $2 == 400 { refused++; next }
        refused && $1 > w { bad++ }
        END { exit !(refused == 1 && !bad) }'
}
# The body of the last request the model server got, as logged.
last_body() { tail -1 "$REQUESTS"; }

# runner_header [NAME=value...]: the start of a script that runs as_user elsewhere (a tmux
# pane, script(1)) in this test's home, with E2E_ENV and the extra environment given.
runner_header() {
    echo "source '$E2E_DIR/lib.sh'"
    printf 'TEST_HOME=%q\n' "$TEST_HOME"
    printf 'E2E_ENV=(%s)\n' "$(printf '%q ' "${E2E_ENV[@]}" "$@")"
}

# tmux_caretz SHELL DIR ARGS...: starts Caretz as the test user in a 120x40 tmux window. When
# Caretz ends, the window shows "CARETZ-EXITED <status>".
tmux_caretz() {
    local shell=$1 dir=$2
    shift 2
    local runner=$AGENT_TMP/run-caretz.sh
    {
        runner_header
        printf 'as_user %q %q %q' "$shell" "$dir" "$E2E_BIN"
        for arg in "$@"; do printf ' %q' "$arg"; done
        echo
        echo 'echo "CARETZ-EXITED $?"'
        echo 'sleep 600'
    } >"$runner"
    end_tmux
    tmux -L "$TMUX_SOCKET" new-session -d -s main -x 120 -y 40 "bash $runner"
}

keys() { tmux -L "$TMUX_SOCKET" send-keys "$@"; }

# A folder on the host that the test user may write but the sandbox may not.
new_outside_dir() { runuser -u "$E2E_USER" -- mktemp -d "$TEST_HOME/outside.XXXXXX"; }

# check_screen NAME TEXT [SECONDS]: passes when TEXT shows up on the screen in time.
check_screen() {
    if wait_for_screen "$2" "${3:-15}"; then
        pass "$1"
    else
        fail "$1" "\"$2\" did not appear; the screen:" "$(screen_text | grep -v '^$' | tail -25)"
    fi
}

# install_acp_client: the real ACP client library (@zed-industries/agent-client-protocol, from
# npm), installed once per machine and version and reused by later runs, with acp_client.mjs
# beside the test's files; sets ACP_SDK. Fails (saying so) when npm cannot install it.
install_acp_client() {
    local version=0.4.5 prefix tmp_prefix
    prefix=/tmp/caretz-e2e-acp-sdk-$version
    ACP_SDK=$prefix/node_modules/@zed-industries/agent-client-protocol/dist
    if [[ ! -f $ACP_SDK/acp.js ]]; then
        tmp_prefix=$(mktemp -d "$prefix.XXXXXX")
        if ! npm install --silent --no-audit --no-fund --prefix "$tmp_prefix" \
            "@zed-industries/agent-client-protocol@$version" >&2; then
            fail "npm installs @zed-industries/agent-client-protocol@$version"
            return 1
        fi
        chmod -R a+rX "$tmp_prefix"
        mv -T "$tmp_prefix" "$prefix" 2>/dev/null || rm -rf "$tmp_prefix"
    fi
    cp "$E2E_DIR/acp_client.mjs" "$AGENT_TMP/"
}
