#!/usr/bin/env bash
# Noticing a question, and inspecting the sandbox, as the unprivileged test user in a tmux
# server of that user's own (so Caretz can ask it about allow-passthrough, as at a real desk):
# an offer and a network approval ring the bell, which makes tmux flag the window while another
# window is current; OSC 9 and OSC 777 reach the pane (its raw bytes, recorded with pipe-pane),
# through tmux's passthrough form once allow-passthrough is on; the title says Caretz waits and
# the user's own title comes back, also when Caretz is killed (SIGTERM, SIGHUP) while the
# question waits; notify_command gets the summary as an argument and in
# $CARETZ_QUESTION without the terminal; "notify": "off" and no terminal notice nothing;
# `/sandbox` and `caretz sandbox show --json` list a writable root and a hidden path from the
# config with their sources.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

dir=$(u mktemp -d /tmp/caretz-e2e-notify.XXXXXX)
own_home
ws=$(new_workspace)
data=$(u mktemp -d "$TEST_HOME/notify-data.XXXXXX")
secret=$(u mktemp -d "$TEST_HOME/notify-secret.XXXXXX")
server=
# The tmux server runs as the test user, like the user's own.
tmux_() { u tmux -L "$TMUX_SOCKET" "$@"; }
cleanup() {
    end_tmux
    [[ -n $server ]] && kill "$server" 2>/dev/null
    rm -rf "$dir" "$ws" "$data" "$secret"
}
trap cleanup EXIT

# A local HTTP server that the network policy does not list, for the network approval.
python3 -c 'import functools,http.server,sys
h=functools.partial(http.server.SimpleHTTPRequestHandler,directory=sys.argv[1])
s=http.server.ThreadingHTTPServer(("127.0.0.1",0),h)
print(s.server_address[1],flush=True); s.serve_forever()' "$dir" >"$dir/port" 2>/dev/null &
server=$!
for _ in $(seq 100); do [[ -s $dir/port ]] && break; sleep 0.1; done
port=$(cat "$dir/port")

# notify_command: writes each argument, $CARETZ_QUESTION and whether stdin is a terminal.
cat >"$dir/notify.sh" <<'EOF'
#!/bin/sh
out=$1
shift
{
    for a in "$@"; do printf 'arg=%s\n' "$a"; done
    printf 'question=%s\n' "$CARETZ_QUESTION"
    if [ -t 0 ]; then echo stdin=terminal; else echo stdin=other; fi
    echo END
} >>"$out"
EOF
chmod 755 "$dir/notify.sh"
config=$dir/config.json
cat >"$config" <<EOF
{"notify_command": ["$dir/notify.sh", "$dir/notified"],
 "sandbox": {"writable": ["$data"], "hidden": ["$secret"]}}
EOF
echo '{"notify": "off"}' >"$dir/off.json"
chown -R "$E2E_USER" "$dir"

# Caretz in window 0 of session "main", a shell in window "other"; the helpers read Caretz's.
pane=
screen_text() { tmux_ capture-pane -p -t "$pane" -S -500; }
whole_screen() { tmux_ capture-pane -p -t "$pane" -S -; }
type_line() {
    tmux_ send-keys -t "$pane" -l -- "$1"
    tmux_ send-keys -t "$pane" Enter
}
# start ARGS...: Caretz with ARGS in window 0, its raw output recorded in $dir/raw.N, the user's
# own title set, and window "other" current.
runs=0
start() {
    runs=$((runs + 1))
    raw=$dir/raw.$runs
    end_tmux && while tmux_ has-session 2>/dev/null; do sleep 0.05; done
    local cmd
    cmd=$(printf 'cd %q && exec %q --ask-sandbox-off %s' "$ws" "$E2E_BIN" "$*")
    tmux_ new-session -d -s main -x 120 -y 40 \
        "env -i HOME=$TEST_HOME USER=$E2E_USER LOGNAME=$E2E_USER PATH=/usr/local/bin:/usr/bin:/bin SHELL=/bin/bash LANG=C.UTF-8 TERM=screen-256color TMUX=\"\$TMUX\" TMUX_PANE=\"\$TMUX_PANE\" bash -c $(printf %q "$cmd")"
    pane=$(tmux_ display-message -p -t main:0 '#{pane_id}')
    tmux_ pipe-pane -o -t "$pane" "cat >> $raw"
    tmux_ select-pane -t "$pane" -T "users-own-title"
    tmux_ new-window -t main -n other 'sleep 600'
    wait_for_screen "caretz>" 20
}
bell_flag() { tmux_ display-message -p -t main:0 '#{window_bell_flag}'; }
title() { tmux_ display-message -p -t "$pane" '#{pane_title}'; }
current_window() { tmux_ display-message -p -t main '#{window_name}'; }
# raw_has TEXT: the pane's raw bytes hold TEXT (printf escapes: \033, \007).
raw_has() { grep -qaF -- "$(printf "$1")" "$raw"; }
wait_for_raw() {
    for _ in $(seq 100); do raw_has "$1" && return 0; sleep 0.1; done
    return 1
}
ask() {
    local offers
    offers=$(whole_screen | grep -c "$2")
    type_line "$1"
    wait_for_count "$2" "$offers" 30
}
notified() { grep -c '^END$' "$dir/notified" 2>/dev/null || echo 0; }
wait_for_notified() {
    for _ in $(seq 100); do (($(notified) >= $1)) && return 0; sleep 0.1; done
    return 1
}

# --- the offer, with notify at its default (desktop)
start --config "$config"
check "another window is current" test "$(current_window)" = other
check "no bell before the question" test "$(bell_flag)" = 0
# Outside the workspace, where the user may write on the host: the sandbox refuses it.
target=$TEST_HOME/notify-outside-$$
check "a refused write shows the offer" ask "!touch $target" "Allow once"
summary="run outside the sandbox? (refused: write) touch $target"
check "tmux flags Caretz's window for the bell while another window is current" \
    test "$(bell_flag)" = 1
check "OSC 9 with the summary reaches the pane" wait_for_raw "\033]9;Caretz: $summary\007"
check "OSC 777 reaches the pane" raw_has "\033]777;notify;Caretz waits for an answer;$summary\007"
check "outside passthrough, nothing is wrapped for tmux" not raw_has "\033Ptmux;"
check "the title says Caretz waits for an answer" test "$(title)" = "Caretz waits for an answer"
check "notify_command runs once" wait_for_notified 1
check "... with the summary as its last argument" grep -qxF "arg=$summary" "$dir/notified"
check "... and in CARETZ_QUESTION" grep -qxF "question=$summary" "$dir/notified"
check "... without the terminal as its stdin" grep -qx "stdin=other" "$dir/notified"
tmux_ send-keys -t "$pane" Enter
wait_for_prompt "caretz>" 20
check "the answer takes the user's own title back" test "$(title)" = "users-own-title"

# --- the network approval, now with allow-passthrough on in this tmux
tmux_ set-option -g allow-passthrough on
check "a destination outside the policy asks" \
    ask "!curl --noproxy '' -sS -m 60 -o /dev/null http://localhost:$port/" "reach localhost:$port"
net="allow a sandboxed command to reach localhost:$port?"
check "the network approval's OSC 9 goes through tmux's passthrough form" \
    wait_for_raw "\033Ptmux;\033\033]9;Caretz: $net\007\033\\\\"
check "... and OSC 777 too" raw_has "\033Ptmux;\033\033]777;notify;Caretz waits for an answer;$net\007"
check "notify_command hears of the network approval" wait_for_notified 2
check "... with its summary" grep -qxF "question=$net" "$dir/notified"
tmux_ send-keys -t "$pane" s
wait_for_prompt "caretz>" 60

# --- /sandbox: the config's writable root and hidden path, each with its source
type_line "/sandbox"
check "/sandbox lists the writable root from the config with its source" \
    wait_for_screen "  $data  [sandbox.writable in $config]" 10
check "... and the hidden path with its source" \
    wait_for_screen "  $secret  [sandbox.hidden in $config]" 2
check "... and the built-in ones as built in" wait_for_screen "  /run  [built in]" 2
check "... and the destination allowed for the session" \
    wait_for_screen "  localhost:$port  [you, at the network approval]" 2
end_tmux

# --- "notify": "off": no bell, no notification, no title
start --config "$dir/off.json"
check "with notify off the offer still asks" ask "!touch $target" "Allow once"
check "... and the pane's bytes are recorded up to it" wait_for_raw "Allow once"
check "... but the title stays the user's own" test "$(title)" = "users-own-title"
tmux_ send-keys -t "$pane" Enter
wait_for_prompt "caretz>" 20
# The notice would have come before the offer's text, so by now tmux would have flagged it.
check "... tmux flags no bell" test "$(bell_flag)" = 0
check "... and no OSC 9 reached the pane" not raw_has "\033]9;"
end_tmux

# --- Caretz killed while the question waits: the user's own title comes back all the same
for sig in TERM HUP; do
    start --config "$config"
    # The pane stays, dead, once Caretz has gone, so its title can still be read.
    tmux_ set-option -p -t "$pane" remain-on-exit on
    check "SIG$sig: a refused write shows the offer" ask "!touch $target" "Allow once"
    check "... the title says Caretz waits for an answer" test "$(title)" = "Caretz waits for an answer"
    kill -"$sig" "$(tmux_ display-message -p -t "$pane" '#{pane_pid}')"
    for _ in $(seq 100); do
        [[ $(tmux_ display-message -p -t "$pane" '#{pane_dead}') == 1 ]] && break
        sleep 0.1
    done
    check "... kill -$sig ends Caretz" test "$(tmux_ display-message -p -t "$pane" '#{pane_dead}')" = 1
    check "... and the user's own title is back" test "$(title)" = "users-own-title"
    end_tmux
done

# --- no terminal: nobody is asked, so nothing rings and notify_command never runs
before=$(notified)
caretz_as_user /bin/bash "$ws" --ask-sandbox-off --config "$config" exec "touch $target"
check "without a terminal the command is not offered" contains "$OUT" "nobody was asked"
check "... and notify_command does not run" test "$(notified)" = "$before"
check "... and no escape is printed" not_contains "$OUT" $'\e]'

# --- caretz sandbox show --json, parsed
show_json() {
    OUT=$(as_user /bin/bash "$ws" "$E2E_BIN" sandbox show --json "$@" 2>/dev/null)
    RC=$?
}
# json_check PYTHON_EXPRESSION: true when it holds for the JSON in $OUT (as j).
json_check() { python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(0 if eval(sys.argv[2]) else 1)' "$OUT" "$1"; }
show_json --config "$config"
check "sandbox show --json exits 0" test "$RC" = 0
check "... and python3 parses it" json_check 'isinstance(j, dict)'
check "... with the config's writable root and its source" \
    json_check "{'value': '$data', 'source': 'sandbox.writable in $config'} in j['writable']"
check "... the workspace as built in" \
    json_check "{'value': '$ws', 'source': 'built in: the folder Caretz started in'} in j['writable']"
check "... the config's hidden path and its source" \
    json_check "{'value': '$secret', 'source': 'sandbox.hidden in $config'} in j['hidden']"
check "... the API keys removed from the environment" \
    json_check "'OPENAI_API_KEY' in [e['value'] for e in j['env_removed']]"
check "... Docker off by default" json_check "j['allow_docker'] == {'value': False, 'source': 'default'}"
show_json --config "$config" --allow-docker --plan --profile ops
check "--allow-docker is named as the source" \
    json_check "j['allow_docker'] == {'value': True, 'source': '--allow-docker'}"
check "--plan leaves only the private /tmp writable" \
    json_check "j['plan_mode']['value'] and [w['value'] for w in j['writable']] == ['/tmp']"
check "--profile ops names the profile and what it set" \
    json_check "j['profile']['value'] == 'ops' and j['ask_sandbox_off']['source'] == 'built-in profile ops'"
OUT=$(as_user /bin/bash "$ws" "$E2E_BIN" sandbox show --config "$config" 2>&1)
check "sandbox show as text lists the hidden path with its source" \
    contains "$OUT" "  $secret  [sandbox.hidden in $config]"

finish
