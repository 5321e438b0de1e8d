#!/usr/bin/env bash
# The host the proxy judged is the host the server is asked for, as the unprivileged test user,
# against a real HTTP server on the host's 127.0.0.1 that logs every Host header it receives:
# a client's own Host header never reaches it, a head that would slip a second Host past the
# proxy (a bare LF, a repeated header) is refused or cleaned, and a host name with a NUL
# cannot be judged as one host and reached as another.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

own_home
ws=$(new_workspace)
files=$(mktemp -d /tmp/caretz-e2e-host.XXXXXX)
server=
cleanup() {
    [[ -n $server ]] && kill "$server" 2>/dev/null
    rm -rf "$ws" "$files"
}
trap cleanup EXIT

# The server answers every GET with the Host headers it got and logs "PATH HOST..." per request.
python3 - "$files/hosts.log" >"$files/port" 2>"$files/server.log" <<'PY' &
import http.server, sys
log = open(sys.argv[1], "a", buffering=1)
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        hosts = self.headers.get_all("Host") or []
        log.write(self.path + " " + " ".join(hosts) + "\n")
        body = ("hosts=" + ",".join(hosts) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
PY
server=$!
for _ in $(seq 50); do [[ -s $files/port ]] && break; sleep 0.1; done
port=$(cat "$files/port")
touch "$files/hosts.log"

config="$files/config.json"
cat >"$config" <<EOF
{"sandbox": {"allowed_domains": ["127.0.0.1:$port", "*.allowed.test"]}}
EOF
chmod a+rx "$files" && chmod a+r "$config"

# A client that writes a request head byte for byte (Python escapes in its argument) to the
# proxy named in $http_proxy, as no well-behaved client would, and prints the status line.
cat >"$ws/raw_request.py" <<'PY'
import os, socket, sys, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["http_proxy"])
head = sys.argv[1].encode().decode("unicode_escape").encode("latin-1")
with socket.create_connection((proxy.hostname, proxy.port), 10) as s:
    s.sendall(head)
    print("status:", s.makefile("rb").readline().decode("latin-1").strip())
PY
chmod a+r "$ws/raw_request.py"

# logged PATH: the Host headers the server logged for PATH ("absent" if it was never asked).
logged() {
    local line
    line=$(grep -a "^/$1 " "$files/hosts.log") || { echo absent; return; }
    echo "${line#* }"
}

target="127.0.0.1:$port"
caretz_as_user /bin/bash "$ws" exec --config "$config" \
    "curl --noproxy '' -sS -m 10 -H 'Host: other.example' http://$target/forged; \
     curl --noproxy '' -sS -m 10 http://$target/plain; \
     python3 raw_request.py 'GET http://$target/twice HTTP/1.1\r\nHost: $target\r\nHost: other.example\r\n\r\n'; \
     python3 raw_request.py 'GET http://$target/lf HTTP/1.1\r\nX-A: b\nHost: other.example\r\n\r\n'; \
     python3 raw_request.py 'GET http://$target/fold HTTP/1.1\r\nX-A: b\r\n other.example\r\n\r\n'; \
     python3 raw_request.py 'GET http://127.0.0.1\x00.allowed.test:$port/nul HTTP/1.1\r\n\r\n'; \
     python3 raw_request.py 'CONNECT 127.0.0.1\x00.allowed.test:$port HTTP/1.1\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: x\r\n\r\n'"
echo "$OUT" | sed 's/^/     | /'

check "a forged Host header: the server is asked for the host that was judged" \
    test "$(logged forged)" = "$target"
check "without a Host header of its own, the same" test "$(logged plain)" = "$target"
check "... and both clients see that answer" \
    test "$(tr -d '\r' <<<"$OUT" | grep -cx "hosts=$target")" -eq 2
check "two Host headers: only the judged host arrives" test "$(logged twice)" = "$target"
check "two Host headers: the request itself goes through" contains "$OUT" "status: HTTP/1.0 200 OK"
check "a bare LF, a folded line and NUL in a host name are each refused with 400" \
    test "$(grep -c '^status: HTTP/1.1 400 ' <<<"$OUT")" -eq 4
check "a Host behind a bare LF never reaches the server" test "$(logged lf)" = absent
check "a folded header line is refused too" test "$(logged fold)" = absent
check "a host name with a NUL in it is not reached" test "$(logged nul)" = absent
check "... nor through a tunnel" test "$(logged tunnel)" = absent
check "the server never heard of other.example" not_contains "$(tr -d '\0' <"$files/hosts.log")" other.example
check "no request reached the server with a refused head" \
    test "$(wc -l <"$files/hosts.log")" -eq 3

finish
