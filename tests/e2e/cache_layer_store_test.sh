#!/usr/bin/env bash
# The private cache layer's store (DESIGN.md section 4), as the unprivileged user: a cache folder
# the host does not have yet is made in the store (and found on top of the host's folder once
# the host makes it); `caretz cache clear` refuses while a Caretz of the workspace runs and not
# after one was killed; a second Caretz of the workspace at the same time writes an upper folder
# of its own, never the one a live overlay uses; `sandbox.cache_layer: false` turns the layer
# off; where no overlay can be had (a state folder on a file system without user extended
# attributes), Go's cache variable points into the store and go builds there.
# Usage: cache_layer_store_test.sh [session|fresh]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cache_layer_lib.sh"
# A file system of the test's own for the state folder, seen by nothing outside the test.
private_etc_caretz "$0" "$@"
sandbox_mode "${1:-}"
own_home
ws=$(new_workspace)
ramfs=""
trap 'rm -rf "$TEST_HOME"; [[ -n $ramfs ]] && umount "$ramfs" && rmdir "$ramfs"' EXIT

# --- cache folders the host does not have ------------------------------------------------------
check "setup: a new user's home has no ~/.cache and no ~/.m2" \
    test ! -e "$TEST_HOME/.cache" -a ! -e "$TEST_HOME/.m2"
in_sandbox "$ws" 'mkdir -p ~/.cache/newtool ~/.m2/repository/org/x &&
    echo stored > ~/.cache/newtool/entry && echo jar > ~/.m2/repository/org/x/x.jar && cat ~/.cache/newtool/entry'
check "$MODE_NAME: a tool makes its cache folders where the host has none" test "$RC" -eq 0
check "... and writes them" test "${OUT##*$'\n'}" = stored
check "... into the store, not the host's home" test ! -e "$TEST_HOME/.cache" -a ! -e "$TEST_HOME/.m2"
in_sandbox "$ws" 'cat ~/.cache/newtool/entry ~/.m2/repository/org/x/x.jar'
check "$MODE_NAME: a later sandbox of the workspace finds them" test "$OUT" = $'stored\njar'
caretz_as_user /bin/bash "$ws" sandbox show
check "$MODE_NAME: caretz sandbox show lists them" \
    contains "$OUT" "$TEST_HOME/.cache  [built in: missing on the host, a link to the store]"
# The host makes its own ~/.cache: the overlay over it finds the sandbox's writes on top.
user_sh 'mkdir -p ~/.cache && echo host-entry > ~/.cache/marker'
in_sandbox "$ws" 'cat ~/.cache/marker ~/.cache/newtool/entry'
check "$MODE_NAME: once the host has the folder, a sandbox sees the host's entries and its own" \
    test "$OUT" = $'host-entry\nstored'
before=$(snapshot .cache)
# The Caretz that writes the store's upper folders mounts with the same work folder every time
# (the kernel empties it): the sandboxes leave no work folders behind.
for _ in 1 2 3; do in_sandbox "$ws" true; done
in_sandbox "$ws" 'sleep 1'
work_folders=$(find "$TEST_HOME/.local/state/caretz/cache" -mindepth 3 -maxdepth 3 -name 'work*' -printf '%f\n')
check "$MODE_NAME: one-shot sandboxes one after another leave one work folder, the one they share" \
    test "$work_folders" = work

# A sandbox that leaves much to write back: a one-shot Caretz exits without waiting for it, and
# its overlays end (the kernel writing the upper folder back) only after. The next Caretz
# mounts over the same upper folders once they have; before, the kernel's log said
# "upperdir is in-use as upperdir/workdir of another mount ... undefined behavior".
in_use() { dmesg | grep -c "is in-use as upperdir/workdir of another mount"; }
check "setup: the kernel's log can be read" dmesg
in_use_before=$(in_use)
in_sandbox "$ws" 'head -c 300M /dev/zero > ~/.cache/big'
in_sandbox "$ws" 'rm ~/.cache/big'
check "$MODE_NAME: a Caretz started as the last one ends waits until its overlays are gone" \
    test "$RC" -eq 0 -a "$(in_use)" -eq "$in_use_before"

# --- caretz cache clear while a Caretz of the workspace runs -----------------------------------
# start_holding NAME COMMAND: runs caretz exec COMMAND in the background, in MODE, writing
# its output to $ws/NAME.out; waits until COMMAND made $ws/NAME.up; sets HOLDER (runuser's pid).
start_holding() {
    as_user /bin/bash "$ws" "$E2E_BIN" exec "${MODE[@]}" "$2; touch $ws/$1.up; sleep 3001" \
        >"$ws/$1.out" 2>&1 </dev/null &
    HOLDER=$!
    for _ in $(seq 100); do [[ -e $ws/$1.up ]] && break; sleep 0.1; done
}
start_holding a 'echo from-a > ~/.cache/from-a; grep -o "upperdir=[^,]*" /proc/self/mountinfo | head -1'
check "setup: a Caretz of the workspace runs" test -e "$ws/a.up"
caretz_as_user /bin/bash "$ws" cache clear
check "$MODE_NAME: caretz cache clear refuses while a Caretz of the workspace runs" test "$RC" -ne 0
check "... and says why" contains "$OUT" "a Caretz session or command of this folder is running"

# A second Caretz of the workspace meanwhile: an upper folder of its own.
in_sandbox "$ws" 'echo from-b > ~/.cache/from-b && grep -o "upperdir=[^,]*" /proc/self/mountinfo | head -1; ls ~/.cache'
check "$MODE_NAME: a second Caretz of the workspace at the same time writes its caches" \
    test "$RC" -eq 0
upper_a=$(grep -o 'upperdir=.*' "$ws/a.out")
upper_b=$(grep -o 'upperdir=.*' <<<"$OUT")
check "... into an upper folder of its own, not the one the first one's overlay uses" \
    test -n "$upper_a" -a -n "$upper_b" -a "$upper_a" != "$upper_b"
check "... the first one's being the store's" test "${upper_a#upperdir=}" = upper

caretz_pid=$(descendant_named "$HOLDER" caretz)
kill -KILL "$caretz_pid"
wait "$HOLDER" 2>/dev/null
gone "$caretz_pid"
in_sandbox "$ws" 'ls ~/.cache'
check "$MODE_NAME: the store keeps what the first one wrote" contains "$OUT" "from-a"
check "... and not what the second one wrote" not_contains "$OUT" "from-b"
in_sandbox "$ws" 'sleep 1'
left=$(find "$TEST_HOME/.local/state/caretz/cache" -mindepth 3 -maxdepth 3 \
    \( -name 'work.*' -o -name 'upper.*' \) | wc -l)
check "$MODE_NAME: the second one's own upper and work folders are removed by a later Caretz" \
    test "$left" -eq 0
caretz_as_user /bin/bash "$ws" cache clear
check "$MODE_NAME: once the Caretz was killed (SIGKILL), caretz cache clear empties the layer" \
    test "$RC" -eq 0
in_sandbox "$ws" 'ls ~/.cache'
check "... and a later sandbox sees the host's cache as it is" test "$OUT" = marker
check "$MODE_NAME: the host's ~/.cache is byte-for-byte unchanged" test "$before" = "$(snapshot .cache)"

# --- sandbox.cache_layer: false ----------------------------------------------------------------
config=$TEST_HOME/.config/caretz/config.json
u mkdir -p "${config%/*}"
echo '{"sandbox": {"cache_layer": false}}' | u tee "$config" >/dev/null
caretz_as_user /bin/bash "$ws" sandbox show
check "sandbox.cache_layer false: caretz sandbox show says the layer is off, and who said so" \
    contains "$OUT" "off: the caches are read-only like the rest of the home's configuration  [sandbox.cache_layer in $config]"
caretz_as_user /bin/bash "$ws" doctor
check "... and so does caretz doctor" contains "$OUT" "cache layer: off (sandbox.cache_layer in $config)"
in_sandbox "$ws" 'echo x > ~/.cache/off-entry'
check "$MODE_NAME: with the layer off, a write into a cache is refused" \
    contains "$OUT" "Read-only file system"
check "... and reaches nothing" test ! -e "$TEST_HOME/.cache/off-entry"
u rm "$config"

# --- no overlay: the tools' variables point into the store --------------------------------------
# The state folder on ramfs, which keeps no user extended attributes: the overlay cannot keep its
# bookkeeping there. Go's build cache on the host is warm.
ramfs=$(mktemp -d /tmp/caretz-e2e-ramfs.XXXXXX)
mount -t ramfs ramfs "$ramfs" && chown "$E2E_USER:" "$ramfs" && chmod 0700 "$ramfs"
E2E_ENV=(XDG_STATE_HOME="$ramfs")
u bash -c "cd '$ws' && printf 'module sbx\ngo 1.19\n' > go.mod &&
    printf 'package main\nimport \"fmt\"\nfunc main() { fmt.Println(\"built\", 6*7) }\n' > main.go"
user_sh "cd '$ws' && go build -o /dev/null ."
before=$(snapshot .cache)
caretz_as_user /bin/bash "$ws" sandbox show
check "no overlay: caretz sandbox show says the variables point into the store, and why" \
    contains "$OUT" "tools' cache variables point at the store, since no overlay can be had: the file system of $ramfs"
in_sandbox "$ws" 'echo "GOCACHE=$GOCACHE" && go build -o app . && ./app'
check "$MODE_NAME, no overlay: go build works" contains "$OUT" "built 42"
check "... with Go's cache in the store's own folder" contains "$OUT" "GOCACHE=/.caretz/cache/go-build"
check "... which holds what it built" \
    test -n "$(find "$ramfs/caretz/cache" -path '*/own/go-build/*' -type f | head -1)"
check "... while the host's ~/.cache is byte-for-byte unchanged" test "$before" = "$(snapshot .cache)"
E2E_ENV=()

finish
