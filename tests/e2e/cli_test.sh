#!/usr/bin/env bash
# The command line as a user meets it: help, version, usage errors, config errors, the man
# page, and failing closed when the sandbox cannot start.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
own_home
ws=$(new_workspace)
cfg=$(runuser -u "$E2E_USER" -- mktemp "$TEST_HOME/cfg.XXXXXX")
trap 'rm -rf "$ws" "$cfg"' EXIT

caretz_as_user /bin/bash "$ws" --help
check "--help exits 0" test "$RC" -eq 0
for opt in --ask-sandbox-off --profile --permission-timeout --allow-docker --plan --print \
    --model --provider --base-url --config --no-session --json exec acp doctor; do
    check "--help lists $opt" contains "$OUT" "$opt"
done
check "--help mentions the shell completions" contains "$OUT" "Shell completions for bash, zsh and fish"
check "--help says what the host runs later stays read-only" contains "$OUT" "what the host runs later"
check "--help says a full context window never ends a session" contains "$OUT" "A full context window never ends a session"
check "... and names the session's commands for it" contains "$OUT" "/compact [WHAT], /clear, /status and"
caretz_as_user /bin/bash "$ws" --version
check "--version prints the version" contains "$OUT" "caretz 0."

caretz_as_user /bin/bash "$ws" --permission-timeout soon exec true
check "a bad --permission-timeout exits 2" test "$RC" -eq 2
check "... and says what a duration looks like" contains "$OUT" "90s"
caretz_as_user /bin/bash "$ws" exec --permission-timeout 90s true
check "a good --permission-timeout is accepted after the subcommand too" test "$RC" -eq 0
caretz_as_user /bin/bash "$ws" --profile nightly exec true
check "an unknown profile exits 2" test "$RC" -eq 2
check "... and names the known profiles" contains "$OUT" "ops"
caretz_as_user /bin/bash "$ws" --provider gemini exec true
check "an unknown provider exits 2" test "$RC" -eq 2
caretz_as_user /bin/bash "$ws" --no-such-flag
check "an unknown flag exits 2" test "$RC" -eq 2
caretz_as_user /bin/bash "$ws" exec
check "exec without a command exits 2" test "$RC" -eq 2

printf '{\n  "ask_sandbox_off": true,\n  "sandbox": {"writable": "oops"}\n}\n' >"$cfg"
caretz_as_user /bin/bash "$ws" --config "$cfg" exec true
check "a wrong type in the config exits 2" test "$RC" -eq 2
check "... naming the file, the line and the key" contains "$OUT" "$cfg:3: \"sandbox.writable\""
printf '{\n  "ask_sandbox_off": tru\n}\n' >"$cfg"
caretz_as_user /bin/bash "$ws" --config "$cfg" exec true
check "invalid JSON in the config exits 2 naming the line" contains "$OUT" "$cfg:2: not valid JSON"
runuser -u "$E2E_USER" -- mkdir -p "$TEST_HOME/.config/caretz"
echo '{"sandbox": {"writable": ["/var/tmp"]}}' | runuser -u "$E2E_USER" -- tee "$TEST_HOME/.config/caretz/config.json" >/dev/null
caretz_as_user /bin/bash "$ws" exec --no-session 'touch /var/tmp/caretz-e2e-cfg && echo wrote'
check "the default config file is read (a configured writable root)" contains "$OUT" wrote
rm -f /var/tmp/caretz-e2e-cfg "$TEST_HOME/.config/caretz/config.json"

OUT=$(runuser -u "$E2E_USER" -- env -i HOME="$TEST_HOME" PATH=/nonexistent SHELL=/bin/bash \
    /bin/bash -c "cd '$ws' && '$E2E_BIN' exec --no-session 'echo ran > marker'" 2>&1)
RC=$?
check "without bwrap caretz refuses to run the command" test ! -e "$ws/marker"
check "... says how to install it" contains "$OUT" "apt-get install bubblewrap"
check "... and exits 125" test "$RC" -eq 125

caretz_as_user /bin/dash "$ws" exec 'echo ran > marker'
check "a session shell Caretz has no hooks for is refused before anything runs" test ! -e "$ws/marker"
check "... naming the shells it supports" contains "$OUT" "the session shell /bin/dash is not supported; set SHELL to bash, zsh or fish"
check "... and exits 125" test "$RC" -eq 125

# caretz without caretz-inside beside it (a binary copied alone) runs nothing, in either mode.
lone=$(runuser -u "$E2E_USER" -- mktemp -d "$TEST_HOME/lone.XXXXXX")
install -o "$E2E_USER" -m 0755 "$E2E_BIN" "$lone/bin-caretz"
for mode in --no-session ""; do
    OUT=$(as_user /bin/bash "$ws" "$lone/bin-caretz" exec $mode 'echo ran > marker' 2>&1 </dev/null)
    RC=$?
    check "without caretz-inside ${mode:-(session)} runs nothing" test ! -e "$ws/marker"
    check "... names the file it needs" contains "$OUT" \
        "cannot open $TEST_HOME/libexec/caretz/caretz-inside, which Caretz runs in its sandbox"
    check "... and exits 125" test "$RC" -eq 125
done
rm -rf "$lone"

man_text=$(MANWIDTH=80 man -l "$(dirname "$0")/../../man/caretz.1" 2>&1)
check "man -l man/caretz.1 renders" contains "$man_text" "caretz exec"
check "the man page documents --ask-sandbox-off" contains "$man_text" "ask-sandbox-off"
check "the man page documents caretz doctor" contains "$man_text" "CHECKING A MACHINE"
check "the man page documents the shell completions" contains "$man_text" "SHELL COMPLETIONS"

finish
