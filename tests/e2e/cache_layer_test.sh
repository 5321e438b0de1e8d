#!/usr/bin/env bash
# The private cache layer (DESIGN.md section 4) with Debian's own toolchains, offline, in a home
# whose caches are warm: builds that need new cache entries work in the sandbox; it sees what
# the host's caches hold; the host's cache folders stay byte-for-byte as they were; a later
# sandbox of the workspace reuses what an earlier one stored (a ccache hit), another
# workspace's does not; the home workspace gets the layer too; `caretz sandbox show` lists the
# layer and its size, and `caretz cache clear` empties it.
# Usage: cache_layer_test.sh [session|fresh]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cache_layer_lib.sh"
sandbox_mode "${1:-}"
own_home
ws=$(new_workspace)
other=$(new_workspace)
trap 'rm -rf "$TEST_HOME"' EXIT


# The host's caches, warm: Go's build cache from a build on the host, ccache's folder and
# configuration, cargo's registry folder, npm's cache, and a marker in each.
user_sh 'mkdir -p ~/hostgo && cd ~/hostgo && printf "module hostgo\ngo 1.19\n" > go.mod &&
         printf "package main\nimport \"fmt\"\nfunc main() { fmt.Println(\"host\") }\n" > main.go &&
         go build -o /dev/null . &&
         mkdir -p ~/.cache/ccache ~/.cargo/registry ~/.npm/_cacache &&
         echo "max_size = 1G" > ~/.cache/ccache/ccache.conf &&
         for d in ~/.cache ~/.cargo/registry ~/.npm; do echo host-entry > "$d/marker"; done'
check "setup: the host's Go build cache is warm" test -d "$TEST_HOME/.cache/go-build"
# cargo, offline: a crate in a local registry (as a company mirror would serve it), which a
# build unpacks into ~/.cargo/registry/src, where the host has not unpacked it yet.
user_sh 'cargo new --vcs none --lib -q ~/e2ecrate && cd ~/e2ecrate &&
         cargo package --no-verify --allow-dirty --offline -q &&
         mkdir -p ~/registry/index/e2/ec && cp target/package/e2ecrate-0.1.0.crate ~/registry/ &&
         sum=$(sha256sum ~/registry/e2ecrate-0.1.0.crate | cut -d" " -f1) &&
         printf "{\"name\":\"e2ecrate\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"%s\",\"features\":{},\"yanked\":false}\n" "$sum" \
             > ~/registry/index/e2/ec/e2ecrate'
check "setup: a crate in a local registry" test -s "$TEST_HOME/registry/index/e2/ec/e2ecrate"
before=$(snapshot .cache .cargo .npm go)

# A Go program the host never built: its build needs new entries in Go's build cache. In a
# repository, as projects are (Go stamps the build with the repository's state).
runuser -u "$E2E_USER" -- bash -c "cd '$ws' && printf 'module sbx\ngo 1.19\n' > go.mod &&
    printf 'package main\nimport (\"fmt\"; \"strings\")\nfunc main() { fmt.Println(strings.ToUpper(\"built in the sandbox\")) }\n' > main.go &&
    mkdir c && printf 'int add(int a, int b) { return a + b; }\n' > c/add.c &&
    git init -q && git add . && git -c user.email=e2e@example.com -c user.name=e2e commit -qm init"
in_sandbox "$ws" 'go build -o app . && ./app'
check "$MODE_NAME: go build that needs new cache entries works" test "$RC" -eq 0
check "... and the program runs" contains "$OUT" "BUILT IN THE SANDBOX"
check "... with no refusal of a cache file" not_contains "$OUT" "read-only file system"

runuser -u "$E2E_USER" -- bash -c "cd '$ws' && cargo new --vcs none -q rustapp &&
    echo 'e2ecrate = \"0.1.0\"' >> rustapp/Cargo.toml && mkdir rustapp/.cargo &&
    printf '[source.crates-io]\nreplace-with = \"local\"\n[source.local]\nlocal-registry = \"%s\"\n' '$TEST_HOME/registry' > rustapp/.cargo/config.toml"
in_sandbox "$ws/rustapp" 'cargo build --offline && ls ~/.cargo/registry/src/*/'
check "$MODE_NAME: cargo build that unpacks a new crate into ~/.cargo/registry works" \
    test "$RC" -eq 0
check "... the crate is unpacked in the sandbox's view" contains "$OUT" "e2ecrate-0.1.0"
check "... not in the host's registry" test ! -e "$TEST_HOME/.cargo/registry/src"

in_sandbox "$ws" 'cat ~/.cache/marker ~/.cargo/registry/marker ~/.npm/marker'
check "$MODE_NAME: the sandbox sees what the host's caches hold" \
    test "$OUT" = $'host-entry\nhost-entry\nhost-entry'

in_sandbox "$ws" 'echo poisoned > ~/.cache/marker && mkdir -p ~/.cargo/registry/src/x && echo "fn main(){}" > ~/.cargo/registry/src/x/build.rs && echo sbx > ~/.npm/new && rm ~/.npm/marker && echo wrote'
check "$MODE_NAME: the sandbox writes, changes and removes cache entries" contains "$OUT" "wrote"

# ccache: the first sandbox misses and stores; a later one (a new session) hits.
in_sandbox "$ws" 'ccache -z >/dev/null && ccache gcc -c c/add.c -o c/add.o && ccache --print-stats'
check "$MODE_NAME: a ccache miss is stored in the sandbox" contains "$OUT" $'cache_miss\t1'
in_sandbox "$ws" 'ccache -z >/dev/null && rm -f c/add.o && ccache gcc -c c/add.c -o c/add.o && ccache --print-stats'
check "$MODE_NAME: a later sandbox of the workspace hits what the first stored" \
    contains "$OUT" $'direct_cache_hit\t1'
in_sandbox "$ws" 'cat ~/.cache/marker ~/.cargo/registry/src/x/build.rs; ls ~/.npm'
check "... and sees what earlier ones wrote" contains "$OUT" "poisoned"
check "... removed entries stay removed there" not_contains "$OUT" "marker"

in_sandbox "$other" 'cat ~/.cache/marker; ls ~/.cargo/registry'
check "$MODE_NAME: another workspace's sandbox sees the host's caches, not this layer" \
    test "$OUT" = $'host-entry\nmarker'

in_sandbox "$TEST_HOME" 'echo from-home > ~/.cache/home-entry && cat ~/.cache/home-entry'
check "$MODE_NAME: the home workspace writes its caches through the layer" \
    test "$RC" -eq 0 -a "${OUT##*$'\n'}" = "from-home"
check "... not into the host's" test ! -e "$TEST_HOME/.cache/home-entry"

# The sandbox holds as before inside the layer's user namespace: a repository made during a
# session is protected from the host (through the sandbox's namespaces, nested one deeper).
if [[ $MODE_NAME == session ]]; then
    OUT=$(printf '%s\n' '!git init -q newrepo && echo made' '!echo x >> newrepo/.git/config' |
        as_user /bin/bash "$ws" "$E2E_BIN" 2>&1)
    check "session: a repository made in the session is protected at once" \
        contains_nocase "$OUT" "newrepo/.git/config: Read-only file system"
fi

check "$MODE_NAME: the host's cache folders are byte-for-byte unchanged" \
    test "$before" = "$(snapshot .cache .cargo .npm go)"
check "... the poisoned entry never reached the host" \
    test "$(cat "$TEST_HOME/.cache/marker")" = host-entry

caretz_as_user /bin/bash "$ws" sandbox show
check "$MODE_NAME: caretz sandbox show lists the layer" contains "$OUT" "Private cache layer:"
check "... its folders" contains "$OUT" "$TEST_HOME/.cache  [built in"
size=$(grep -o '[0-9]* bytes' <<<"$OUT" | head -1)
check "... and the size of what it holds" test "${size% bytes}" -gt 0

caretz_as_user /bin/bash "$ws" cache clear
check "$MODE_NAME: caretz cache clear empties the layer" contains "$OUT" "emptied the private cache layer"
in_sandbox "$ws" 'cat ~/.cache/marker; ls ~/.cargo/registry'
check "... a later sandbox sees the host's caches again" test "$OUT" = $'host-entry\nmarker'
caretz_as_user /bin/bash "$ws" sandbox show
size=$(grep -o '[0-9]* bytes' <<<"$OUT" | head -1)
check "... and the layer holds only what that sandbox wrote" test "${size% bytes}" -lt 4096

# Opening a cache to the sandbox by hand lets it write what the host runs later: Caretz says so.
runuser -u "$E2E_USER" -- mkdir -p "$TEST_HOME/.config/caretz"
echo '{"sandbox": {"writable": ["~/.cache"]}}' |
    runuser -u "$E2E_USER" -- tee "$TEST_HOME/.config/caretz/config.json" >/dev/null
in_sandbox "$ws" 'true'
check "$MODE_NAME: sandbox.writable naming a cache folder warns" \
    contains "$OUT" "sandbox.writable opens $TEST_HOME/.cache, a cache your tools run from on the host"
rm -f "$TEST_HOME/.config/caretz/config.json"

finish
