#!/usr/bin/env bash
# The network as sandboxed commands meet it, as the unprivileged test user, against a real HTTP
# server on the host's 127.0.0.1: direct connections fail; through Caretz's proxy an allowed
# host works, a denied or unlisted one gets 403 when nobody can be asked, and in tmux the
# network approval asks (deny, once, for the session, then silently); a 100 MB download
# arrives intact; 50 concurrent connections all complete; a network failure never opens the
# sandbox-off offer; the audit log has the decisions.
#
# Host names: "127.0.0.1" is allowed by the config and "localhost" is not, both reaching the
# same server. Both are in NO_PROXY inside the sandbox, so curl is told `--noproxy ''` to
# take the proxy from the environment for them too.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

own_home
ws=$(new_workspace)
files=$(mktemp -d /tmp/caretz-e2e-net.XXXXXX)
audit="$TEST_HOME/.local/state/caretz/audit.jsonl"
server=
cleanup() {
    end_tmux
    [[ -n $server ]] && kill "$server" 2>/dev/null
    rm -rf "$ws" "$files"
    if [[ -e $audit.saved ]]; then rmdir "$audit" && mv "$audit.saved" "$audit"; fi
}
trap cleanup EXIT

# The server: files from $files, and /slow, which answers after a second, so 50 requests
# through a proxy that handled one at a time would take 50 seconds.
head -c 100M /dev/urandom >"$files/big.bin"
echo "hello through the proxy" >"$files/hello.txt"
want_sha=$(sha256sum <"$files/big.bin" | cut -d' ' -f1)
python3 - "$files" >"$files/port" 2>"$files/server.log" <<'PY' &
import functools, http.server, sys, time
class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/slow":
            time.sleep(1)
            body = b"slow ok\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()
http.server.ThreadingHTTPServer.request_queue_size = 128
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                        functools.partial(Handler, directory=sys.argv[1]))
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
PY
server=$!
for _ in $(seq 50); do [[ -s $files/port ]] && break; sleep 0.1; done
port=$(cat "$files/port")
chmod -R a+rX "$files"

config="$files/config.json"
cat >"$config" <<EOF
{"sandbox": {"allowed_domains": ["127.0.0.1:$port"], "denied_domains": ["127.0.0.2"]}}
EOF
denying="$files/denying.json"
cat >"$denying" <<EOF
{"sandbox": {"allowed_domains": ["127.0.0.1"], "denied_domains": ["127.0.0.1:$port"]}}
EOF
chmod a+r "$config" "$denying"
allowed="http://127.0.0.1:$port"
unlisted="http://localhost:$port"
via_proxy="curl --noproxy '' -sS -m 20"

# Network decisions for localhost:$port (the port is this run's own) in the audit log.
decisions() {
    python3 - "$audit" "$1" "$port" <<'PY'
import json, sys
path, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = [json.loads(l) for l in open(path) if '"event":"network"' in l]
print(" ".join(l["decision"] for l in lines if l["host"] == host and l["port"] == port))
PY
}

for mode in session fresh; do
    flags=(--config "$config")
    [[ $mode == fresh ]] && flags+=(--no-session)
    caretz_as_user /bin/bash "$ws" exec "${flags[@]}" \
        "curl --noproxy '*' -sS -m 3 $allowed/hello.txt; python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $port), 3)' 2>&1 | tail -1"
    check "$mode: a direct connection from inside fails" not_contains "$OUT" "hello through the proxy"
    check "$mode: ... as no network" contains "$OUT" "Connection refused"
    caretz_as_user /bin/bash "$ws" exec "${flags[@]}" "$via_proxy $allowed/hello.txt"
    check "$mode: an allowed host answers through the proxy" contains "$OUT" "hello through the proxy"
    caretz_as_user /bin/bash "$ws" exec "${flags[@]}" \
        "$via_proxy -w '%{http_code}\n' $unlisted/hello.txt"
    check "$mode: an unlisted host gets 403 when nobody can be asked" contains "$OUT" "403"
    check "$mode: ... saying Caretz's network policy blocked it" \
        contains "$OUT" "Blocked by Caretz's network policy: localhost:$port"
    check "$mode: ... and how to allow it" contains "$OUT" "sandbox.allowed_domains"
    check "$mode: ... without reaching the server" not_contains "$OUT" "hello through the proxy"
done
check "the audit log records both refusals as nobody_to_ask" \
    test "$(decisions localhost)" = "nobody_to_ask nobody_to_ask"

caretz_as_user /bin/bash "$ws" exec --config "$denying" "$via_proxy $allowed/hello.txt"
check "a denied domain beats an allowed one" contains "$OUT" "Blocked by Caretz's network policy"
check "... and is logged as denied_by_policy" test "$(decisions 127.0.0.1)" = denied_by_policy

started=$SECONDS
caretz_as_user /bin/bash "$ws" exec --config "$config" "$via_proxy $allowed/big.bin | sha256sum"
check "a 100 MB download through the proxy arrives intact" contains "$OUT" "$want_sha"
echo "     (100 MB in $((SECONDS - started)) s)"

started=$SECONDS
caretz_as_user /bin/bash "$ws" exec --config "$config" \
    "for i in \$(seq 50); do $via_proxy $allowed/slow & done; wait"
check "50 concurrent connections all complete" test "$(grep -c '^slow ok' <<<"$OUT")" -eq 50
check "... at the same time, not one after another" test $((SECONDS - started)) -lt 20

caretz_as_user /bin/bash "$ws" exec --ask-sandbox-off --json --config "$config" \
    "$via_proxy $unlisted/; curl --noproxy '*' -sS -m 3 $allowed/; curl -sS -m 3 http://no-such-host.invalid/; echo 'curl: (6) Could not resolve host: example.com'; echo 'connect: Network is unreachable'; exit 7"
check "a command failing only on the network has no refusals" contains "$OUT" '"refusals":[]'
check "... and no offer" contains "$OUT" '"decision":null'

# The network approval in tmux: the REPL on a terminal, the user answering.
start_pane "$(user_command_line /bin/bash "$ws" "$E2E_BIN --ask-sandbox-off --config $config; sleep 600")"
wait_for_screen "caretz>" 10
question="wants to reach localhost:$port"
# fetch KEY [BEFORE]: fetches from the unlisted host at the prompt (after starting BEFORE, if
# given), answers the question with KEY, and waits for the command's end.
fetches=0
fetch() {
    local questions
    questions=$(count_lines "$question")
    fetches=$((fetches + 1))
    tmux_ send-keys -t main -l "!${2:-}$via_proxy $unlisted/hello.txt; wait; echo fetch-done-$fetches"
    tmux_ send-keys -t main Enter
    if [[ -n $1 ]]; then
        wait_for_count "$question" "$questions" 10 || return 1
        [[ -n ${2:-} ]] && sleep 1.5 && ticks_under_question=$(whole_screen |
            awk -v q="$question" 'index($0, q) { n = 0; next } /^tick-/ { n++ } END { print n }')
        tmux_ send-keys -t main "$1"
    fi
    wait_for_count "^fetch-done-$fetches\$" 0 15 || return 1
    asked=$(($(count_lines "$question") - questions))
}
hellos() { count_lines "^hello through the proxy"; }

# The command prints all along; while the question is on screen its output must wait, so
# nothing can cover the question or scroll it away.
ticking='(for i in $(seq 30); do echo tick-$i; sleep 0.1; done) & '
check "an unlisted host asks; d denies" fetch d "$ticking"
check "... while the question is on screen the command's output waits" \
    test "${ticks_under_question:-x}" = 0
# It is drawn while the command's output passes through the terminal unprocessed: each of its
# lines must still start at the left edge.
check "... and each line of the question starts at the left edge" \
    test "$(count_lines "^Allow localhost:$port?")" -ge 1 -a "$(count_lines "^  \[o\] Allow once")" -ge 1
check "... and comes once it is answered" wait_for_count "^tick-30" 0 5
check "... and the command gets the 403" wait_for_count "Blocked by Caretz's network policy" 0 1
check "... without the file" test "$(hellos)" -eq 0
check "o allows this connection" fetch o
check "... and the file arrives" test "$(hellos)" -eq 1
check "allowed once asks again; s allows for the session" fetch s
check "... and the file arrives" test "$(hellos)" -eq 2
check "allowed for the session: the next request passes" fetch ""
check "... without asking" test "$asked" -eq 0
check "... and the file arrives" test "$(hellos)" -eq 3
check "the audit log has every decision" \
    test "$(decisions localhost)" = "nobody_to_ask nobody_to_ask nobody_to_ask deny allow_once allow_session session_allowance"

# A decision that cannot be written to the audit log lets nothing through, as with the offer:
# with a folder where the log should be, even the session's allowance no longer passes.
mv "$audit" "$audit.saved" && mkdir "$audit"
check "an unwritable audit log: the allowed host stays blocked" fetch ""
check "... saying why" wait_for_count "cannot write the audit log" 0 5
check "... and the file does not arrive" test "$(hellos)" -eq 3
rmdir "$audit" && mv "$audit.saved" "$audit"

finish
