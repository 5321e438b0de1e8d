#!/usr/bin/env bash
# Git repositories made or changed while Caretz runs, as the unprivileged test user with $1
# (bash, zsh or fish) as the shell, in session mode or a fresh sandbox per command ($2). In
# Caretz's REPL on a tmux screen, commands plant hooks and config: in a repository made with
# git init, in a clone, through a new worktree's commondir, in a submodule made during the
# session, and in a worktree and a submodule the user made before. Afterwards the user runs
# git commit and git status on the host: nothing planted may run, and the screen and the audit
# log must say what Caretz moved aside.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
SHELL_NAME=${1:-bash}
SH=$(command -v "$SHELL_NAME")
sandbox_mode "${2:-session}"

own_home
trap 'end_tmux; rm -rf "$TEST_HOME"' EXIT
host_git() {
    local dir=$1
    shift
    as_user /bin/bash "$dir" git -c user.name=e2e -c user.email=e2e@example.invalid \
        -c protocol.file.allow=always "$@"
}
audit="$TEST_HOME/.local/state/caretz/audit.jsonl"
screen_joined() { tmux_ capture-pane -p -J -t main -S -; }

# A repository to clone from, outside the workspace (the sandbox may read it).
origin="$TEST_HOME/origin"
u mkdir -p "$origin"
host_git "$origin" init -q . && host_git "$origin" commit -q --allow-empty -m init

# The workspace: a repository with a worktree and a submodule the user made on the host; the
# submodule has no hooks folder (as after git clone --template=).
ws="$TEST_HOME/ws"
u mkdir -p "$ws"
host_git "$ws" init -q . && host_git "$ws" commit -q --allow-empty -m init
host_git "$ws" worktree add -q wt
host_git "$ws" submodule -q add "$origin" lib && host_git "$ws" commit -q -m lib
rm -rf "$ws/.git/modules/lib/hooks"

# What the model's commands plant, as a script, so every shell runs the same thing. A hook or
# config that ever runs leaves $T/PWNED-<case>.
u tee "$TEST_HOME/plant.sh" >/dev/null <<'SH'
T=$1
hook() {
    mkdir -p "$1" && printf '#!/bin/sh\necho PWNED; touch %s/PWNED-%s\n' "$T" "$2" > "$1/pre-commit" &&
        chmod +x "$1/pre-commit" && echo "planted $2"
}
case $2 in
    init) git init -q made && hook made/.git/hooks init ;;
    clone)
        git -c protocol.file.allow=always clone -q "$T/origin" cloned &&
            git -C cloned config core.fsmonitor "touch $T/PWNED-clone-fsmonitor" &&
            git -C cloned config alias.st "!touch $T/PWNED-clone-alias" &&
            hook "$PWD/evil-hooks" clone-hookspath &&
            git -C cloned config core.hooksPath "$PWD/evil-hooks" && echo "planted clone" ;;
    worktree)
        git worktree add -q wt2 && mkdir -p evil/objects evil/refs && hook evil/hooks worktree &&
            printf '[core]\n\tfsmonitor = "touch %s/PWNED-worktree-fsmonitor"\n' "$T" > evil/config &&
            echo ../../../evil > .git/worktrees/wt2/commondir && echo "planted commondir" ;;
    submodule)
        git -c protocol.file.allow=always clone -q --separate-git-dir=.git/modules/lib2 \
            "$T/origin" lib2 && hook .git/modules/lib2/hooks submodule ;;
    later) hook made/.git/hooks later ;;
    old-worktree) echo ../../../evil > .git/worktrees/wt/commondir && echo "planted old-worktree" ;;
    old-submodule) hook .git/modules/lib/hooks old-submodule ;;
esac
SH

# ran_nothing DIR CASE: git commit, status and an alias by the user on the host in DIR run
# nothing that CASE planted.
ran_nothing() {
    local dir=$1 case=$2 out
    out=$(host_git "$dir" commit -q --allow-empty -m "after the sandbox" 2>&1
        host_git "$dir" status 2>&1
        host_git "$dir" st 2>&1)
    local marks
    marks=$(find "$TEST_HOME" -maxdepth 1 -name "PWNED-$case*")
    [[ $out != *PWNED* && -z $marks ]] || {
        echo "     git on the host ran what the sandbox planted in $dir: $out $marks"
        return 1
    }
}

start_pane "$(user_command_line "$SH" "$ws" "$E2E_BIN ${MODE[*]}; echo CARETZ-EXITED; sleep 600")"
wait_for_prompt caretz\> 60 || fail "Caretz did not start" "$(screen_text)"
# plant CASE: types the command into the empty prompt, then waits for the next prompt.
plant() {
    local before
    before=$(count_lines 'caretz>')
    type_line "!sh $TEST_HOME/plant.sh $TEST_HOME $1"
    wait_for_count 'caretz>' "$before" 120 && wait_for_prompt caretz\> 30 ||
        fail "no prompt after planting $1" "$(screen_text)"
}
for c in init clone worktree submodule later old-worktree old-submodule; do plant "$c"; done
type_line "/quit"
wait_for_screen CARETZ-EXITED 60 || fail "Caretz did not end" "$(screen_text)"
screen=$(screen_joined)

check "git init, then a hook: the hook is planted inside" contains "$screen" "planted init"
check "... Caretz says it moved the hook aside" \
    contains "$screen" "a sandboxed command wrote the git hook $ws/made/.git/hooks/pre-commit; it is moved to"
check "... git commit on the host runs nothing" ran_nothing "$ws/made" init
check "... a later command cannot write the hooks at all" not_contains "$screen" "planted later"
check "... it was refused as read-only" contains_nocase "$screen" "made/.git/hooks/pre-commit: Read-only file system"

config_line=$(grep -F "wrote the git config $ws/cloned/.git/config with" <<<"$screen")
check "a clone whose config names commands: Caretz says it cut the config" test -n "$config_line"
check "... naming what it left out" eval '[[ $config_line == *core.fsmonitor* && $config_line == *core.hookspath* && $config_line == *alias.st* ]]'
check "... git commit, git status and git st on the host run nothing" ran_nothing "$ws/cloned" clone
check "... and the clone still knows its origin" \
    test "$(host_git "$ws/cloned" remote get-url origin)" = "$origin"

check "a new worktree whose commondir names a writable folder: Caretz says it moved it aside" \
    contains "$screen" "a sandboxed command wrote $ws/.git/worktrees/wt2/commondir"
check "... git in the worktree on the host runs nothing" ran_nothing "$ws/wt2" worktree

check "a submodule made in the session, then a hook: Caretz says it moved the hook aside" \
    contains "$screen" "wrote the git hook $ws/.git/modules/lib2/hooks/pre-commit"
check "... git commit in the submodule on the host runs nothing" ran_nothing "$ws/lib2" submodule

check "the user's worktree: its commondir cannot be repointed" not_contains "$screen" "planted old-worktree"
check "... git there on the host runs nothing" ran_nothing "$ws/wt" worktree
check "the user's submodule without hooks: no hook can be planted" \
    not_contains "$screen" "planted old-submodule"
check "... git there on the host runs nothing" ran_nothing "$ws/lib" old-submodule
check "the main repository still works on the host" ran_nothing "$ws" ""

check "the audit log names each hook moved aside" \
    eval "grep '\"action\":\"hook_disabled\"' '$audit' | grep -q '$ws/made/.git/hooks/pre-commit' &&
          grep '\"action\":\"hook_disabled\"' '$audit' | grep -q '$ws/.git/modules/lib2/hooks/pre-commit'"
check "... the config it cut" \
    eval "grep '\"action\":\"config_stripped\"' '$audit' | grep -q '$ws/cloned/.git/config'"
check "... and the commondir it moved aside" \
    eval "grep '\"action\":\"commondir_moved_aside\"' '$audit' | grep -q '$ws/.git/worktrees/wt2/commondir'"

finish
