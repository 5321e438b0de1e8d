#!/usr/bin/env bash
# `caretz doctor` as the unprivileged user: every check passes on this machine with each
# supported shell, and each broken part is reported with its fix and exit status 1: bubblewrap
# moved aside (in a private mount namespace, so parallel tests keep theirs), a config file that
# is not JSON, a key the model API refuses (which is never printed), keys of any length (also
# ones found in the words that hide them) with no network and with a 401, slow rc files, an
# unknown $TERM.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
own_home
ws=$TEST_HOME/ws
# A cache folder, so the cache layer's check mounts an overlay beside the shell check's.
runuser -u "$E2E_USER" -- mkdir "$ws" "$TEST_HOME/.cache"
trap 'agent_cleanup; rm -rf "$TEST_HOME"' EXIT
export MODEL_SERVER_KEY=$API_KEY
start_model '[]'
model_env openai

checks=(bubblewrap "user namespaces" config shell "shell start" hooks "audit log" "cache layer"
    "session bus" "network proxy" libutempter terminal "model endpoint")

# doctor SHELL ARGS...: runs caretz doctor as the user; sets OUT, RC and MS (wall time).
doctor() {
    local started=$(date +%s%N)
    caretz_as_user "$1" "$ws" doctor "${@:2}"
    MS=$((($(date +%s%N) - started) / 1000000))
}

in_use() { dmesg | grep -c "is in-use as upperdir/workdir of another mount"; }
in_use_before=$(in_use)
for shell in /bin/bash /usr/bin/zsh /usr/bin/fish; do
    name=$(basename "$shell")
    # The shell's start is timed against a second; on a machine busy with parallel tests one
    # start may miss it, so a slow start is tried again, up to three times in all.
    for _ in 1 2 3; do
        doctor "$shell"
        grep -q "^problem  shell start: $name with your rc files took" <<<"$OUT" || break
        echo "     slow start under load, again: $(grep '^problem  shell start' <<<"$OUT")"
    done
    echo "     caretz doctor with $name took $MS ms; it says: $(tail -1 <<<"$OUT")"
    check "$name: doctor exits 0 on this machine" test "$RC" -eq 0
    for c in "${checks[@]}"; do
        check "$name: ... reports \"$c\" ok" grep -q "^ok       $c: " <<<"$OUT"
    done
    check "$name: ... one line per check and a summary" test "$(wc -l <<<"$OUT")" -eq $((${#checks[@]} + 1))
    check "$name: ... names the shell it started" grep -q "^ok       shell start: $name with your rc files was ready" <<<"$OUT"
    # Under load the machine is slow; the figure above is what it took.
    check "$name: ... in well under the time a user would wait ($MS ms)" test "$MS" -lt 5000
done
check "bubblewrap's version is named" grep -q "^ok       bubblewrap: bubblewrap [0-9]" <<<"$OUT"
check "the cache layer's check and the shell's sandbox never put two live overlays over one upper folder (the kernel's log)" \
    test "$(in_use)" -eq "$in_use_before"
check "the cache layer was mounted and says where the sandbox's writes go" \
    grep -q "^ok       cache layer: .*stays in $TEST_HOME/.local/state/caretz/cache/.* (the host's caches are never written)" <<<"$OUT"
check "the session bus line says whether there is one" grep -q "^ok       session bus: none on this host" <<<"$OUT"
check "the key is never printed" not_contains "$OUT" "$API_KEY"
check "the model API was asked for its models, with the key" \
    grep -q '"path": "/v1/models", "method": "GET", "key_matched": true' "$REQUESTS"

# --- bubblewrap moved aside ----------------------------------------------------------------------
# /dev/null bound over /usr/bin/bwrap in a mount namespace of this command alone: no bwrap
# can be run there, as if it were not installed.
OUT=$(TEST_HOME=$TEST_HOME unshare -m -- bash -c 'mount --bind /dev/null /usr/bin/bwrap || exit 99
    source "$1/lib.sh"; E2E_ENV=("${@:3}"); as_user /bin/bash "$2" "$E2E_BIN" doctor' \
    _ "$E2E_DIR" "$ws" "${E2E_ENV[@]}" 2>&1 </dev/null)
RC=$?
check "without bwrap doctor exits 1" test "$RC" -eq 1
check "... reports bubblewrap as the problem with its fix" \
    grep -q "^problem  bubblewrap: .*apt-get install bubblewrap" <<<"$OUT"
check "... and the session checks as not tried" grep -q "^problem  hooks: not tried" <<<"$OUT"
check "... while the checks that need no bwrap still pass" grep -q "^ok       audit log: " <<<"$OUT"
check "... and the summary counts the problems" grep -q "^caretz doctor: 3 problems in" <<<"$OUT"
check "bwrap is still in place outside that namespace" test -x /usr/bin/bwrap -a ! -c /usr/bin/bwrap

# --- a config file that is not JSON ----------------------------------------------------------------
cfg=$TEST_HOME/broken.json
printf '{\n  "ask_sandbox_off": tru\n}\n' | runuser -u "$E2E_USER" -- tee "$cfg" >/dev/null
doctor /bin/bash --config "$cfg"
check "a broken config: doctor exits 1" test "$RC" -eq 1
check "... naming the file and the line" grep -q "^problem  config: $cfg:2: not valid JSON" <<<"$OUT"
check "... while the sandbox still passes its checks" grep -q "^ok       hooks: " <<<"$OUT"

# --- a key the model API refuses -------------------------------------------------------------------
wrong_key=sk-e2e-Wrong-Key-4242
E2E_ENV=(CARETZ_BASE_URL="$MODEL_URL/v1" CARETZ_API_KEY="$wrong_key")
doctor /bin/bash
check "a refused key: doctor exits 1" test "$RC" -eq 1
check "... saying the API rejected the key and where to set it" \
    grep -q "^problem  model endpoint: .*rejected the API key (HTTP 401.*check CARETZ_API_KEY" <<<"$OUT"
check "... without printing the key, though the API quoted it back" not_contains "$OUT" "$wrong_key"
E2E_ENV=(CARETZ_BASE_URL="http://127.0.0.1:9/v1")
doctor /bin/bash
check "no model API listening: doctor says it cannot reach it" \
    grep -q "^problem  model endpoint: cannot reach the model API at http://127.0.0.1:9/v1" <<<"$OUT"

# --- keys of any length, also ones found in "(the key)", the words that hide a key -----------------
# Each run is ended after 30 s: a doctor that hides the key forever never gets to its summary.
# doctor_ends NAME KEY [unshare -n]: caretz doctor with bash and that key, the default endpoint
# when there is no network, else the local server, which quotes the key back in its 401.
doctor_ends() {
    local name=$1 key=$2 started=$(date +%s%N)
    shift 2
    OUT=$(TEST_HOME=$TEST_HOME timeout 30 "${@:-env}" bash -c 'source "$1/lib.sh"
        E2E_ENV=("${@:4}"); as_user /bin/bash "$2" "$3" doctor' \
        _ "$E2E_DIR" "$ws" "$E2E_BIN" "${E2E_ENV[@]}" CARETZ_API_KEY="$key" 2>&1 </dev/null)
    RC=$?
    MS=$((($(date +%s%N) - started) / 1000000))
    check "$name: doctor ends, exit status 1 ($MS ms, status $RC)" test "$RC" -eq 1
    check "$name: ... with its summary" grep -q "^caretz doctor: 1 problem in ${#checks[@]} checks" <<<"$OUT"
}
real_key=sk-e2e-Wrong-Key-0123456789abcdefABCDEF
E2E_ENV=()
for key in k e y the key "(the key)" "$real_key"; do
    doctor_ends "no network, key \"$key\"" "$key" unshare -n
    check "... the endpoint cannot be reached, which it says" \
        grep -q "^problem  model endpoint: cannot reach the model API at https://api.openai.com/v1 (.*); check --base-url or CARETZ_BASE_URL$" <<<"$OUT"
    [[ $key == "$real_key" ]] && check "... and the key is not printed" not_contains "$OUT" "$key"
done
doctor_ends 'no network, no key' "" unshare -n
check "... the hosted API needs one, which it says" \
    grep -q "^problem  model endpoint: no API key for https://api.openai.com/v1: set CARETZ_API_KEY" <<<"$OUT"
E2E_ENV=(CARETZ_BASE_URL="$MODEL_URL/v1")
for key in k e y the key "(the key)" "$real_key"; do
    doctor_ends "a 401, key \"$key\"" "$key"
    check "... the API rejected it, its quote of the key hidden" \
        grep -q "^problem  model endpoint: the model API at $MODEL_URL/v1 rejected the API key (HTTP 401: .*: (the key)); check CARETZ_API_KEY" <<<"$OUT"
    [[ $key == "$real_key" ]] && check "... and the key is not printed" not_contains "$OUT" "$key"
done
doctor_ends 'a 401, no key' ""
check "... the API wants a key, which it says" \
    grep -q "^problem  model endpoint: the model API at $MODEL_URL/v1 wants an API key (HTTP 401: .*); set CARETZ_API_KEY" <<<"$OUT"

# --- rc files that take their time -------------------------------------------------------------------
echo 'sleep 2' | runuser -u "$E2E_USER" -- tee "$TEST_HOME/.bashrc" >/dev/null
doctor /bin/bash
check "a slow .bashrc: doctor exits 1" test "$RC" -eq 1
check "... saying how long the shell took and how to see why" \
    grep -q "^problem  shell start: bash with your rc files took [0-9]* ms.*bash -ixc exit" <<<"$OUT"
rm -f "$TEST_HOME/.bashrc"

# --- a terminal type terminfo does not know ---------------------------------------------------------
model_env openai
E2E_ENV+=(TERM=caretz-no-such-terminal)
doctor /bin/bash
check "an unknown TERM: doctor exits 1" test "$RC" -eq 1
check "... naming the entry to install" \
    grep -q "^problem  terminal: TERM is \"caretz-no-such-terminal\".*apt-get install ncurses-term" <<<"$OUT"

finish
