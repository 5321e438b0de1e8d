#!/usr/bin/env bash
# Git hooks and config that did not exist when the sandbox started: as the unprivileged test
# user, in session mode ($1 = session) or a fresh sandbox per command ($1 = fresh), a command
# inside tries to plant a hook, or a config that names one, in a real repository whose
# .git/hooks or .git/config is absent (git clone --template=, a user who deleted the samples),
# in a nested clone, and in a folder that is not a repository yet; then the user runs git on the
# host, as they would next. Nothing planted may run there.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-}"
SH=/bin/bash

# A home of the test's own (lib.sh gives it to Caretz as $HOME), removed at the end.
own_home
trap 'rm -rf "$TEST_HOME"' EXIT
# git as the user on the host, with an identity of its own (no ~/.gitconfig is touched).
host_git() {
    local dir=$1
    shift
    as_user "$SH" "$dir" git -c user.name=e2e -c user.email=e2e@example.invalid "$@"
}
# A repository with one commit, made by the user on the host.
new_repo() {
    u mkdir -p "$1"
    host_git "$1" init -q . && host_git "$1" commit -q --allow-empty -m init
}
# ran_nothing DIR: the user commits on the host; true when no planted hook or config ran.
ran_nothing() {
    local dir=$1 out
    out=$(host_git "$dir" commit --allow-empty -m "after the sandbox" 2>&1)
    [[ $out != *PWNED* && ! -e $dir/PWNED ]] || {
        echo "     git on the host ran what the sandbox planted: $out"
        return 1
    }
}
# A hook that leaves a trace where the user commits, and says so.
plant_hook='printf "#!/bin/sh\necho PWNED; touch PWNED\n" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit'

# --- the workspace's own repository, without .git/hooks -----------------------------------
ws="$TEST_HOME/no-hooks"
new_repo "$ws" && rm -rf "$ws/.git/hooks"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" "mkdir -p .git/hooks && $plant_hook"
check "no .git/hooks: writing a hook there fails as read-only" \
    contains_nocase "$OUT" "Read-only file system"
check "... and git commit on the host runs none" ran_nothing "$ws"
check "... while the repository still works on the host" \
    test "$(host_git "$ws" rev-list --count HEAD)" = 2
check "... and its hooks folder is an empty one" test -z "$(ls -A "$ws/.git/hooks")"

# A second command: the folder Caretz created is just as protected.
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" "$plant_hook"
check "... nor by a later command" test ! -e "$ws/.git/hooks/pre-commit"

# --- the workspace's own repository, without .git/config -------------------------------------
ws="$TEST_HOME/no-config"
new_repo "$ws" && rm -f "$ws/.git/config"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" \
    'mkdir -p evil && printf "#!/bin/sh\necho PWNED; touch PWNED\n" > evil/pre-commit && chmod +x evil/pre-commit && printf "[core]\n\thooksPath = evil\n\tfsmonitor = \"echo PWNED; touch PWNED\"\n" > .git/config; git config core.hooksPath evil; cat .git/config'
check "no .git/config: a config naming hooks cannot be written" not_contains "$OUT" "hooksPath"
check "... and git commit on the host runs nothing" ran_nothing "$ws"
check "... and git status neither" \
    eval '! host_git "$ws" status 2>&1 | grep -q PWNED && [[ ! -e $ws/PWNED ]]'
check "... while the repository still works on the host" \
    test "$(host_git "$ws" rev-list --count HEAD)" = 2
check "... and its config is an empty file" test -f "$ws/.git/config" -a ! -s "$ws/.git/config"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" \
    'git -c user.name=e2e -c user.email=e2e@example.invalid commit -q --allow-empty -m inside && git log --oneline | wc -l'
check "... with which git in the sandbox still commits" test "$(tr -d '\r' <<<"$OUT" | tail -1)" = 3

# --- a nested clone without hooks or config --------------------------------------------------
ws="$TEST_HOME/outer"
u mkdir -p "$ws"
new_repo "$ws/inner" && rm -rf "$ws/inner/.git/hooks" "$ws/inner/.git/config"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" \
    "cd inner && mkdir -p .git/hooks && $plant_hook; printf '[core]\n\tfsmonitor = \"touch PWNED\"\n' > .git/config"
check "a nested clone without hooks or config: git commit there runs nothing" ran_nothing "$ws/inner"
check "... and no hook is there" test ! -e "$ws/inner/.git/hooks/pre-commit"

# --- a git folder where the missing hooks cannot be created ----------------------------------
ws="$TEST_HOME/locked"
new_repo "$ws" && rm -rf "$ws/.git/hooks" && chmod a-w "$ws/.git"
# The user owns the folder, so a command could make it writable again and then plant a hook.
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" "chmod u+w .git; mkdir -p .git/hooks && $plant_hook; touch .git/other"
check "hooks that cannot be created: Caretz says the git folder stays read-only" \
    contains "$OUT" "cannot create the missing hooks or config of $ws/.git"
check "... and no hook, nor anything else, is written in it" \
    test ! -e "$ws/.git/hooks" -a ! -e "$ws/.git/other" -a "$(stat -c %a "$ws/.git")" = 555
chmod u+w "$ws/.git"

# --- folders the search cannot read -----------------------------------------------------------
# Both unreadable to their owner, who could make them readable again from inside the sandbox:
# one with a repository in it (so with subfolders, opened to be listed), one without
# subfolders (looked up by name instead). Each must stay read-only whole.
ws="$TEST_HOME/unreadable"
new_repo "$ws/closed/repo" && rm -rf "$ws/closed/repo/.git/hooks"
u mkdir -p "$ws/shut"
chmod 000 "$ws/closed" "$ws/shut"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" \
    "chmod 700 closed shut; (cd closed/repo && mkdir -p .git/hooks && $plant_hook); touch shut/x"
check "unreadable folders: the sandbox cannot make them readable" \
    test "$(stat -c %a "$ws/closed") $(stat -c %a "$ws/shut")" = "0 0"
check "... refused as read-only" contains_nocase "$OUT" "Read-only file system"
chmod 700 "$ws/closed" "$ws/shut"
check "... so git commit on the host runs nothing in the repository inside one" \
    ran_nothing "$ws/closed/repo"
check "... and nothing was written in the other" test ! -e "$ws/shut/x"

# --- a folder that is not a repository, used twice ---------------------------------------------
# The first sandbox leaves the (empty) .git it kept read-only; the second must not treat that
# folder as a repository it may fill.
ws="$TEST_HOME/plain"
u mkdir -p "$ws"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'git init -q . 2>&1; echo first'
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" "git init -q . && $plant_hook; echo second"
check "no repository: a later sandbox cannot make one with hooks" test ! -e "$ws/.git/hooks/pre-commit"
check "... so git commit on the host runs none there" ran_nothing "$ws"

finish
