#!/usr/bin/env bash
# Repositories' auto-run files at every depth, and nothing of the protection left on the host, as
# the unprivileged test user in session mode ($1 = session) or a fresh sandbox per command
# ($1 = fresh). A repository with husky's layout (core.hooksPath=.husky/_), a real direnv from
# Debian (an allowed .envrc that sources .envrc.local, and a whitelisted folder), tools' folders
# at the top and in a subfolder, and a folder without subfolders two deep with its own allowed
# .envrc, .envrc.local and mise.toml: sandboxed writes there are refused or moved aside, and
# afterwards a host `git commit` and a `cd` with direnv's hook in a real bash run nothing
# planted; ordinary files at every depth land. After Caretz ends (normally, SIGTERM, SIGKILL) a
# folder without a repository has no .git, the repository no empty editor folders and the home
# no empty git config; `go build` on the host works there during a run and after it.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-}"
SH=/bin/bash

own_home
trap 'end_tmux; rm -rf "$TEST_HOME" "${leaf_before:-}"' EXIT
H=$TEST_HOME
ws="$H/ws"
repo="$ws/repo"
u mkdir -p "$repo/sub" "$repo/trusted" "$repo/.cursor" "$repo/sub/.vscode" "$repo/sub/.claude" \
    "$repo/.husky/_" "$H/.config/direnv"
host_git() { as_user "$SH" "$repo" git -c user.name=e2e -c user.email=e2e@example.invalid "$@"; }
host_git init -q .
# husky's layout: git runs .husky/_/pre-commit, which runs the user's .husky/pre-commit.
u sh -c "printf '#!/bin/sh\nexec sh \"\$(dirname \"\$0\")/../pre-commit\"\n' > '$repo/.husky/_/pre-commit'"
u chmod +x "$repo/.husky/_/pre-commit"
u sh -c "echo 'echo husky-ran > $H/husky.log' > '$repo/.husky/pre-commit'"
host_git config core.hooksPath .husky/_
# direnv: an allowed .envrc that sources .envrc.local, and a whitelisted folder.
u sh -c "printf 'source_env_if_exists .envrc.local\nexport FROM_ENVRC=1\n' > '$repo/.envrc'"
u sh -c "echo 'export FROM_LOCAL=1' > '$repo/.envrc.local'"
u sh -c "printf '[whitelist]\nprefix = [ \"$repo/trusted\" ]\n' > '$H/.config/direnv/direnv.toml'"
as_user "$SH" "$repo" direnv allow . >/dev/null 2>&1
u sh -c "echo '{}' > '$repo/.cursor/mcp.json'"
# A folder without subfolders two deep: an allowed .envrc sourcing .envrc.local, and mise's config.
leaf="$repo/apps/web"
u mkdir -p "$leaf"
u sh -c "printf 'source_env .envrc.local\n' > '$leaf/.envrc'"
u sh -c "echo 'export FROM_LEAF=1' > '$leaf/.envrc.local'"
u sh -c "printf '[env]\nFROM_MISE = \"1\"\n' > '$leaf/mise.toml'"
as_user "$SH" "$leaf" direnv allow . >/dev/null 2>&1
leaf_before=$(mktemp -d)
cp "$leaf/.envrc.local" "$leaf/mise.toml" "$leaf_before/"
host_git add -A && host_git commit -q -m init
check "setup: the host's commit ran husky's pre-commit" test -s "$H/husky.log"
rm -f "$H/husky.log"

# run CMD: caretz exec in the repository; OUT its output and what Caretz said.
run() { OUT=$(as_user "$SH" "$repo" "$E2E_BIN" exec "${MODE[@]}" "$1" 2>&1 </dev/null); }
planted="touch $H/PWNED"
run "echo '$planted' >> .husky/pre-commit"
check "husky's .husky/pre-commit (git runs it through .husky/_): refused" \
    contains_nocase "$OUT" "read-only file system"
run "echo '$planted' > .husky/post-commit"
check "a new hook in husky's folder: refused" contains_nocase "$OUT" "read-only file system"
run "echo '$planted' >> .envrc.local"
check ".envrc.local, which the allowed .envrc sources: refused" \
    contains_nocase "$OUT" "read-only file system"
run "echo '$planted' >> apps/web/.envrc.local; printf '[hooks]\nenter = \"$planted\"\n' >> apps/web/mise.toml; echo ok > apps/web/notes.txt"
check "a folder without subfolders: .envrc.local, which its allowed .envrc sources, unchanged" \
    cmp -s "$leaf/.envrc.local" "$leaf_before/.envrc.local"
check "... and its mise.toml unchanged" cmp -s "$leaf/mise.toml" "$leaf_before/mise.toml"
check "... while an ordinary file there lands" eval '[[ $(cat "$leaf/notes.txt") == ok ]]'
run "echo '$planted' > trusted/.envrc"
check "an .envrc in a folder direnv's whitelist trusts is moved aside" \
    contains "$OUT" "$repo/trusted/.envrc ("
check "... so none is there on the host" test ! -e "$repo/trusted/.envrc"
run "echo '{\"mcpServers\":{\"x\":{\"command\":\"sh\",\"args\":[\"-c\",\"$planted\"]}}}' > .cursor/mcp.json"
check ".cursor at the top: refused" contains_nocase "$OUT" "read-only file system"
run "echo '{\"tasks\":[]}' > sub/.vscode/tasks.json; echo x > sub/.claude/settings.json"
check ".vscode and .claude in a subfolder: refused" contains_nocase "$OUT" "read-only file system"
check "... and left as they were" eval '[[ -z $(ls -A "$repo/sub/.vscode") && -z $(ls -A "$repo/sub/.claude") ]]'
run "mkdir -p sub/deep/.gemini && echo '{\"hooks\":{}}' > sub/deep/.gemini/settings.json"
check "a new .gemini deep down is moved aside" contains "$OUT" "$repo/sub/deep/.gemini ("
check "... so Gemini CLI finds none there" test ! -e "$repo/sub/deep/.gemini"
run "echo ok > top.txt && mkdir -p sub/deep/er && echo ok > sub/deep/er/f.txt && echo ok > trusted/notes.txt"
check "ordinary files at every depth land" \
    eval '[[ $(cat "$repo/top.txt") == ok && $(cat "$repo/sub/deep/er/f.txt") == ok && $(cat "$repo/trusted/notes.txt") == ok ]]'

# What the host does next: a commit, and a cd with direnv's hook in a real bash.
host_git add -A >/dev/null 2>&1
host_git commit -q -m "after the sandbox" >/dev/null 2>&1
check "a host git commit ran husky's own hook" test -s "$H/husky.log"
as_user /bin/bash "$H" bash --norc -i -c "eval \"\$(direnv hook bash)\"; cd '$repo' && _direnv_hook; cd '$repo/trusted' && _direnv_hook; cd '$repo/sub/deep' && _direnv_hook; cd '$leaf' && _direnv_hook" \
    </dev/null >/dev/null 2>&1
check "... and it and direnv's hook in bash ran nothing planted" test ! -e "$H/PWNED"

# Nothing of the protection is left on the host.
gomod="$ws/gomod"
u mkdir -p "$gomod"
u sh -c "printf 'module example.com/m\n\ngo 1.19\n' > '$gomod/go.mod'; printf 'package main\n\nfunc main() {}\n' > '$gomod/main.go'"
E2E_GO=(env GOFLAGS=-mod=mod GOTOOLCHAIN=local)
go_build() { as_user "$SH" "$gomod" "${E2E_GO[@]}" go build -o /dev/null . >/dev/null 2>&1; }
empty_editor_folders() {
    local n
    for n in .vscode .idea .devcontainer .claude; do
        [[ -d $repo/$n && -z $(ls -A "$repo/$n") ]] && return 0
    done
    return 1
}
for how in exit TERM KILL; do
    # It ends by itself (exit) or runs until signalled.
    if [[ $how == exit ]]; then lasting='sleep 3'; else lasting='sleep 60'; fi
    as_user "$SH" "$gomod" "$E2E_BIN" exec "${MODE[@]}" "$lasting" </dev/null >/dev/null 2>&1 &
    sleep 1.5
    check "$how: go build on the host works in a folder without a repository while Caretz runs" go_build
    check "... which has no .git meanwhile" test ! -e "$gomod/.git"
    if [[ $how != exit ]]; then
        # This test's own Caretz, below the job just started: tests run side by side as the
        # same user, and the newest caretz of that user may be another test's.
        pid=$(descendant_named $! caretz)
        check "$how: this test's Caretz is found to be signalled" test -n "$pid"
        [[ -n $pid ]] && kill -"$how" "$pid"
    fi
    wait
    check "$how: afterwards no .git in it" test ! -e "$gomod/.git"
    check "... and go build works" go_build
done
as_user "$SH" "$repo" "$E2E_BIN" exec "${MODE[@]}" 'true' </dev/null >/dev/null 2>&1
check "the repository has no empty editor folders Caretz made" not empty_editor_folders
u rm -rf "$H/.config/git"
as_user "$SH" "$H" "$E2E_BIN" exec "${MODE[@]}" 'true' </dev/null >/dev/null 2>&1
check "started in the home, no empty ~/.config/git/config is made" test ! -e "$H/.config/git"

finish
