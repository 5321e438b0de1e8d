#!/usr/bin/env bash
# caretz exec as the unprivileged test user, with the shell given as $1 (bash, zsh or fish)
# as $SHELL, in session mode ($2 = session) or a fresh sandbox per command ($2 = fresh).
# Each check is something a user would see.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
SH=$(command -v "$1")
MODE=()
[[ "${2:-session}" == fresh ]] && MODE=(--no-session)

own_home
ws=$(new_workspace)
trap 'rm -rf "$ws" /tmp/caretz-e2e-host-probe-$$' EXIT

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'echo hello > out.txt'
check "a write in the workspace lands on the host" test "$(cat "$ws/out.txt" 2>/dev/null)" = hello

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'touch /etc/caretz-e2e-probe'
check "a write to /etc fails with Read-only file system" contains_nocase "$OUT" "Read-only file system"
check "... and nothing appears in /etc" test ! -e /etc/caretz-e2e-probe
check "... and the exit status is the command's" test "$RC" -ne 0

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'touch ~/outside-the-workspace'
check "a write to \$HOME outside the workspace fails" contains_nocase "$OUT" "Read-only file system"
check "... and nothing appears in \$HOME" test ! -e "$TEST_HOME/outside-the-workspace"

as_user "$SH" "$ws" git init -q . && as_user "$SH" "$ws" git config user.name e2e
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'echo evil > .git/hooks/pre-commit'
check "a write to .git/hooks in the workspace fails" contains_nocase "$OUT" "Read-only file system"
check "... and no hook appears" test ! -e "$ws/.git/hooks/pre-commit"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'echo "[core]" >> .git/config'
check "a write to .git/config in the workspace fails" contains_nocase "$OUT" "Read-only file system"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'echo x > .git/description'
check "the rest of .git stays writable" test "$(cat "$ws/.git/description")" = x

runuser -u "$E2E_USER" -- mkdir -p "$TEST_HOME/.ssh"
runuser -u "$E2E_USER" -- sh -c "echo key > $TEST_HOME/.ssh/id_e2e"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'ls ~/.ssh'
check "~/.ssh looks missing inside (ENOENT) while it exists on the host" \
    contains "$OUT" "No such file or directory"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'ls /run'
check "/run looks missing inside" contains "$OUT" "No such file or directory"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'mkdir ~/.ssh'
check "a hidden path is never a writable tmpfs" contains_nocase "$OUT" "Read-only file system"

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'sudo -n true'
check "sudo refuses: no new privileges" contains "$OUT" "no new privileges"
check "... and fails" test "$RC" -ne 0

E2E_ENV=(CARETZ_API_KEY=caretz-secret OPENAI_API_KEY=openai-secret ANTHROPIC_API_KEY=anthropic-secret
    E2E_VISIBLE=yes)
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'env'
E2E_ENV=()
check "env inside shows the user's variables" contains "$OUT" "E2E_VISIBLE=yes"
check "env inside shows no API key" not_contains "$OUT" "secret"

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" "echo private > /tmp/caretz-e2e-host-probe-$$; cat /tmp/caretz-e2e-host-probe-$$"
check "/tmp is writable inside" contains "$OUT" private
check "/tmp writes do not reach the host's /tmp" test ! -e "/tmp/caretz-e2e-host-probe-$$"

as_user "$SH" "$ws" sleep "987654.$$" </dev/null >/dev/null 2>&1 &
sleep 0.3
sleeper=$(pgrep -u "$E2E_USER" -fx "sleep 987654.$$" | head -1)
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'ls /proc'
pkill -u "$E2E_USER" -fx "sleep 987654.$$"
check "the host's processes are invisible" not_contains " $(echo $OUT) " " ${sleeper:-missing} "

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'exit 7'
check "caretz exec exits with the command's status" test "$RC" -eq 7

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" --json 'printf "a\033[31mred\033[0m\n"; exit 3'
json_ok=$(printf '%s' "$OUT" | python3 -c '
import json, sys
r = json.load(sys.stdin)
ok = r["exit_code"] == 3 and r["output"] == "ared\n" and r["ran"] == "sandbox" \
    and r["refusals"] == [] and r["decision"] is None and r["cwd"] == sys.argv[1]
print("yes" if ok else r)' "$ws")
check "--json prints one object with the rendered output" test "$json_ok" = yes

# A fake Docker daemon: a listening socket at the Docker path on the host.
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); time.sleep(60)' \
    /run/docker.sock &
fake_docker=$!
for _ in $(seq 50); do [[ -S /run/docker.sock ]] && break; sleep 0.1; done
chmod 0666 /run/docker.sock
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'test -S /var/run/docker.sock && echo docker-visible'
check "without --allow-docker the Docker socket is hidden" not_contains "$OUT" docker-visible
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" --allow-docker 'test -S /var/run/docker.sock && echo docker-visible'
check "--allow-docker makes the host's Docker socket visible" contains "$OUT" docker-visible
kill "$fake_docker"
rm -f /run/docker.sock

finish
