# Shared helpers for the end-to-end tests (sourced). Tests start as root and run Caretz as
# an unprivileged user, because root behaves differently (sudo, file permissions).

E2E_USER=caretz-e2e
E2E_HOME=/home/$E2E_USER
E2E_PASSWORD='e2e-Secret-4711'
E2E_BIN=/opt/caretz-e2e/bin/caretz

passed=0
failed=0

pass() { passed=$((passed + 1)); printf 'ok   %s\n' "$1"; }
fail() {
    failed=$((failed + 1))
    printf 'FAIL %s\n' "$1"
    [[ $# -gt 1 ]] && printf '     %s\n' "${@:2}"
    return 0
}

# check NAME CONDITION...: passes when the condition (a command) succeeds.
check() {
    local name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name" "condition failed: $*"; fi
}

contains() { [[ "$1" == *"$2"* ]]; }
not_contains() { [[ "$1" != *"$2"* ]]; }
contains_nocase() { [[ "${1,,}" == *"${2,,}"* ]]; }

# as_user SHELL DIR COMMAND...: runs COMMAND as the test user in DIR, with SHELL as $SHELL
# and a clean login-like environment. Extra environment: E2E_ENV (array of NAME=value).
as_user() {
    local shell=$1 dir=$2
    shift 2
    runuser -u "$E2E_USER" -- env -i HOME="$E2E_HOME" USER="$E2E_USER" LOGNAME="$E2E_USER" \
        PATH=/usr/local/bin:/usr/bin:/bin SHELL="$shell" LANG=C.UTF-8 TERM=xterm-256color \
        "${E2E_ENV[@]}" bash -c 'cd "$1" && shift && exec "$@"' _ "$dir" "$@"
}

# caretz_as_user SHELL DIR ARGS...: sets OUT (stdout+stderr) and RC.
caretz_as_user() {
    local shell=$1 dir=$2
    shift 2
    OUT=$(as_user "$shell" "$dir" "$E2E_BIN" "$@" 2>&1 </dev/null)
    RC=$?
}

# A fresh workspace folder in the test user's home; prints its path.
new_workspace() {
    local ws
    ws=$(runuser -u "$E2E_USER" -- mktemp -d "$E2E_HOME/ws.XXXXXX")
    echo "$ws"
}

# Ends the test with the counts and the matching exit status.
finish() {
    echo "$passed passed, $failed failed"
    [[ $failed -eq 0 ]]
}
