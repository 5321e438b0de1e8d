#!/usr/bin/env bash
# No offer for a write the host would refuse too: as an unprivileged user, a refused write into
# a root-owned place (/usr/local, /opt) fails on the host as well, so Caretz names no refusal;
# the same write into a folder of the user's outside the workspace is one. Run with
# --ask-sandbox-off and no terminal, so a refusal shows in the JSON and the stderr notice.
# Usage: host_refuses_test.sh [session|fresh]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-}"
own_home
ws=$(new_workspace)
outside=$(runuser -u "$E2E_USER" -- mktemp -d "$TEST_HOME/outside.XXXXXX")
trap 'rm -rf "$TEST_HOME"' EXIT
echo 'echo tool' | runuser -u "$E2E_USER" -- tee "$ws/tool.sh" >/dev/null

# refusals_of COMMAND: runs it and sets REFUSALS to the refusal subjects of --json, one a line.
refusals_of() {
    caretz_as_user /bin/bash "$ws" exec "${MODE[@]}" --ask-sandbox-off --json "$1"
    REFUSALS=$(printf '%s\n' "$OUT" | grep '^{' | python3 -c '
import json, sys
for r in json.loads(sys.stdin.read())["refusals"]:
    print(r["kind"], r["subject"])')
}

for command in "cp tool.sh /usr/local/bin/caretz-e2e-$$" \
    "install -D -m 755 tool.sh /opt/caretz-e2e-$$/bin/tool" \
    "mkdir -p /usr/local/lib/caretz-e2e-$$/x"; do
    refusals_of "$command"
    check "$MODE_NAME: the host refuses too, so no refusal: $command" test -z "$REFUSALS"
    check "... nor a notice of one" not_contains "$OUT" "the sandbox refused"
    check "... the sandbox did refuse the write" contains_nocase "$OUT" "Read-only file system"
done
check "... and nothing was written on the host" \
    test ! -e "/usr/local/bin/caretz-e2e-$$" -a ! -e "/opt/caretz-e2e-$$"

refusals_of "cp tool.sh $outside/tool.sh"
check "$MODE_NAME: a write the host allows is a refusal" test "$REFUSALS" = "write $outside/tool.sh"
check "... and nobody was asked, the notice says" contains "$OUT" "the sandbox refused write $outside/tool.sh"

# tar names the file relative to its -C folder; where that folder is decides.
refusals_of "tar -cf b.tar tool.sh && tar -xf b.tar -C /opt"
check "$MODE_NAME: tar -C into a folder the host refuses too: no refusal" test -z "$REFUSALS"
refusals_of "tar -cf b.tar tool.sh && tar -xf b.tar -C $outside"
check "$MODE_NAME: tar -C into the user's own folder: a refusal" \
    test "$REFUSALS" = "write $outside/tool.sh"

finish
