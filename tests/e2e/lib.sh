# Shared helpers for the end-to-end tests (sourced). Tests start as root and run Caretz as
# an unprivileged user, because root behaves differently (sudo, file permissions).

E2E_USER=caretz-e2e
E2E_HOME=/home/$E2E_USER
E2E_PASSWORD='e2e-Secret-4711'
E2E_BIN=${E2E_BIN:-/opt/caretz-e2e/bin/caretz}  # ctest sets one per build tree

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

# u COMMAND...: runs COMMAND as the test user, as it is (no clean environment: see as_user).
u() { runuser -u "$E2E_USER" -- "$@"; }

contains() { [[ "$1" == *"$2"* ]]; }
not_contains() { [[ "$1" != *"$2"* ]]; }
# not CMD...: true when CMD fails, for check (whose condition is a command).
not() { ! "$@"; }
contains_nocase() { [[ "${1,,}" == *"${2,,}"* ]]; }
not_contains_nocase() { [[ "${1,,}" != *"${2,,}"* ]]; }

# as_user SHELL DIR COMMAND...: runs COMMAND as the test user in DIR, with SHELL as $SHELL
# and a clean login-like environment, in the test's own home (own_home). Extra environment:
# E2E_ENV (array of NAME=value).
as_user() {
    local shell=$1 dir=$2
    shift 2
    runuser -u "$E2E_USER" -- env -i HOME="${TEST_HOME:?call own_home first}" USER="$E2E_USER" LOGNAME="$E2E_USER" \
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

# A fish user has already run fish interactively once: fish's own folders and universal
# variables exist. Without them fish tries to write them on every start, and in the
# read-only home of the sandbox it complains in the middle of command output.
# Its first interactive start also turns every man page into completions in the background
# (14,000 files and minutes of CPU): a user's machine did that once, long ago; with the folder
# already there, fish skips it, and tests do not load the machine for each other.
init_fish_home() {
    runuser -u "$E2E_USER" -- mkdir -p "$1/.local/share/fish/generated_completions"
    runuser -u "$E2E_USER" -- env HOME="$1" script -qec 'fish -i' /dev/null <<<'exit' >/dev/null 2>&1
}

# The command line that starts Caretz as the test user in DIR with SHELL, for a tmux pane.
user_command_line() {
    local shell=$1 dir=$2
    shift 2
    printf 'runuser -u %s -- env -i HOME=%q USER=%s LOGNAME=%s PATH=/usr/local/bin:/usr/bin:/bin SHELL=%q LANG=C.UTF-8 TERM=screen-256color %s' \
        "$E2E_USER" "${TEST_HOME:?call own_home first}" "$E2E_USER" "$E2E_USER" "$shell" "${E2E_ENV[*]:-}"
    printf ' bash -c %q' "cd $(printf %q "$dir") && $*"
}

# tmux on a socket of the test's own, so tests never touch each other's sessions.
TMUX_SOCKET="caretz-e2e-$$"
tmux_() { tmux -L "$TMUX_SOCKET" "$@"; }
# kill_left_in_panes PANE_PIDS...: kills what still runs in those panes. A pane is a session of
# its own, and its processes do not all go with it: runuser passes no SIGHUP on, so what it
# started (the `sleep 600` after Caretz) would stay behind for as long as it sleeps.
kill_left_in_panes() {
    local pid
    for pid in "$@"; do pkill -KILL -s "$pid" 2>/dev/null; done
    return 0
}
# end_tmux: ends the test's tmux server and everything left in its panes.
end_tmux() {
    local panes status
    panes=$(tmux_ list-panes -a -F '#{pane_pid}' 2>/dev/null)
    tmux_ kill-server 2>/dev/null
    status=$?
    # shellcheck disable=SC2086  # one pid a word
    kill_left_in_panes $panes
    return $status
}
screen_text() { tmux_ capture-pane -p -t main -S -500; }

# wait_for_screen TEXT [SECONDS]: waits until the pane shows TEXT; false on timeout.
wait_for_screen() {
    local text=$1 deadline=$((SECONDS + ${2:-10}))
    while ((SECONDS < deadline)); do
        [[ "$(screen_text)" == *"$text"* ]] && return 0
        sleep 0.1
    done
    return 1
}

# start_caretz_pane DIR ARGS...: Caretz with ARGS as the test user in DIR in the tmux pane,
# with the terminal's modes saved to $modes.before and $modes.after around it, and
# CARETZ-EXITED shown once it ends; waits for its prompt. The test sets `modes`.
start_caretz_pane() {
    local dir=$1
    shift
    rm -f "$modes".*
    start_pane "$(user_command_line /bin/bash "$dir" "stty -g > $modes.before; $E2E_BIN $*; stty -g > $modes.after; echo CARETZ-EXITED; sleep 600")"
    wait_for_screen "caretz>" 10
}
modes_restored() { [[ -s $modes.after ]] && diff -q "$modes.before" "$modes.after" >/dev/null; }

# Every process below PID, PID itself excluded, parents before their children.
descendants() {
    local child
    for child in $(pgrep -P "$1"); do
        echo "$child"
        descendants "$child"
    done
}
# descendant_named PID NAME: the first process below PID whose command name is NAME.
descendant_named() {
    local p
    for p in $(descendants "$1"); do
        [[ $(ps -o comm= -p "$p") == "$2" ]] && { echo "$p"; return; }
    done
}
# wait_until_traced PID: waits up to 5 s for a tracer (strace) to attach to PID.
wait_until_traced() {
    local tracer
    for _ in $(seq 50); do
        tracer=$(awk '/^TracerPid:/ {print $2}' "/proc/$1/status" 2>/dev/null)
        [[ -n $tracer && $tracer != 0 ]] && return 0
        sleep 0.1
    done
    return 1
}
pane_pid() { tmux_ display-message -p -t main '#{pane_pid}'; }
# The Caretz running in this test's pane (other tests may run Caretz at the same time).
caretz_pid() { descendant_named "$(pane_pid)" caretz; }
# command_pid COMMAND_LINE: waits up to 5 s for a process running exactly COMMAND_LINE below
# this pane's Caretz (other tests' processes do not count), and prints its pid.
command_pid() {
    local caretz p
    caretz=$(caretz_pid)
    for _ in $(seq 50); do
        for p in $(descendants "$caretz"); do
            [[ $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) == "$1 " ]] && { echo "$p"; return; }
        done
        sleep 0.1
    done
}
# gone PID [TENTHS]: waits up to TENTHS tenths of a second (20) for PID to be missing or a
# zombie waiting for init to reap it.
gone() {
    for _ in $(seq "${2:-20}"); do
        [[ ! -e /proc/$1 ]] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# type_line TEXT: types TEXT into the pane and presses Enter.
type_line() {
    tmux_ send-keys -t main -l -- "$1"
    tmux_ send-keys -t main Enter
}

# wait_for_prompt [PROMPT] [SECONDS]: true once the screen's last line is an empty prompt
# ("caretz>" unless given; tmux drops the trailing space).
wait_for_prompt() {
    local deadline=$((SECONDS + ${2:-15}))
    while ((SECONDS < deadline)); do
        [[ $(screen_text | grep -v '^[[:space:]]*$' | tail -1) == "${1:-caretz>}" ]] && return 0
        sleep 0.1
    done
    return 1
}

# Lines over the pane's whole history, so a wait can be for something new, never an old line.
whole_screen() { tmux_ capture-pane -p -t main -S -; }
count_lines() { whole_screen | grep -c -- "$1"; }
# wait_for_count TEXT MORE_THAN [SECONDS]: waits until more than MORE_THAN lines show TEXT.
wait_for_count() {
    local text=$1 more_than=$2 deadline=$((SECONDS + ${3:-10}))
    while ((SECONDS < deadline)); do
        (($(count_lines "$text") > more_than)) && return 0
        sleep 0.1
    done
    return 1
}

# type_command COMMAND: types !COMMAND and Enter at the Caretz prompt; `prompts` counts the
# prompts shown before, for prompt_back.
type_command() {
    prompts=$(count_lines "^caretz>")
    tmux_ send-keys -t main -l "!$1"
    tmux_ send-keys -t main Enter
}
# ask COMMAND [SECONDS]: types !COMMAND and waits (10 seconds) for a new offer.
ask() {
    local offers
    offers=$(count_lines "Allow once")
    type_command "$1"
    wait_for_count "Allow once" "$offers" "${2:-10}"
}
# prompt_back [SECONDS]: waits (10 seconds) for the next prompt after the last typed command.
prompt_back() { wait_for_count "^caretz>" "$prompts" "${1:-10}"; }

# start_pane COMMAND: a 120x40 tmux pane running COMMAND (as root; use user_command_line).
start_pane() {
    # A server that is still shutting down would take the new session down with it.
    end_tmux && while tmux_ has-session 2>/dev/null; do sleep 0.05; done
    sleep 0.2
    tmux_ new-session -d -s main -x 120 -y 40 "$1"
}

# private_etc_caretz SCRIPT ARGS...: /etc/caretz is machine-wide and other tests run at the
# same time, so a test that writes it does so in a mount namespace of its own. The first call
# runs SCRIPT again in one (call it before anything is made); there, it binds a folder of the
# test's, ETC, over /etc/caretz, which nothing outside the test ever sees.
private_etc_caretz() {
    if [[ -z ${CARETZ_E2E_PRIVATE_ETC:-} ]]; then
        mkdir -p /etc/caretz  # the mount point; left empty on the host
        exec unshare --mount --propagation private env CARETZ_E2E_PRIVATE_ETC=1 "$@"
    fi
    ETC=$(mktemp -d /tmp/caretz-e2e-etc.XXXXXX)
    chmod 0755 "$ETC"
    mount --bind "$ETC" /etc/caretz || { echo "FAIL cannot bind a folder over /etc/caretz"; exit 1; }
}

# own_home: gives the test a home of its own in TEST_HOME, set up as a new user's (/etc/skel,
# fish's folders), so tests that run at the same time never share rc files, config, audit log,
# credentials or transcripts. Tests call it before anything that uses the home.
own_home() {
    TEST_HOME=$(runuser -u "$E2E_USER" -- mktemp -d "$E2E_HOME/home.XXXXXX")
    runuser -u "$E2E_USER" -- cp -rT /etc/skel "$TEST_HOME"
    init_fish_home "$TEST_HOME"
}

# A fresh workspace folder in the test's home; prints its path.
new_workspace() {
    local ws
    ws=$(runuser -u "$E2E_USER" -- mktemp -d "${TEST_HOME:?call own_home first}/ws.XXXXXX")
    echo "$ws"
}

# sandbox_mode ARG: MODE_NAME is ARG (session, the default, or fresh) and MODE the flags that
# choose it (--no-session for fresh).
sandbox_mode() {
    MODE_NAME=${1:-session}
    MODE=()
    [[ $MODE_NAME == fresh ]] && MODE=(--no-session)
}

# Ends the test with the counts and the matching exit status.
# The test's tmux server and home go with it (an EXIT trap then finds them gone): a home left
# behind would be in every later sandbox's view of /home, one more mount each.
finish() {
    echo "$passed passed, $failed failed"
    end_tmux
    [[ -n ${TEST_HOME:-} ]] && rm -rf "$TEST_HOME" 2>/dev/null
    [[ $failed -eq 0 ]]
}
