#!/usr/bin/env bash
# What the host runs later, as the unprivileged test user in session mode ($1 = session) or a
# fresh sandbox per command ($1 = fresh): started in the home folder, a sandboxed command tries
# to plant something in each family of the table (shell startup files, login files, user units,
# autostart, environment.d, a PATH folder, Python's user site, editors' and tmux's startup
# files), also by moving ~/.config aside; in a repository, the config of an installed pre-commit
# hook. Each write fails, is reported as a write refusal, leaves the host file as it was (a
# missing one stays missing); an editor's tasks a command makes are moved aside after it; and
# nothing planted runs when the user then logs
# in, starts a shell, Python, or commits on the host. Ordinary files still land. In a tmux pane
# with --ask-sandbox-off, Allow once on `!echo alias ... >> ~/.bashrc` writes it on the host, and
# an editor's folder a command makes in a repository made during the session is moved aside.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-}"
SH=/bin/bash

own_home
trap 'end_tmux; rm -rf "$TEST_HOME"' EXIT
H=$TEST_HOME
u mkdir -p "$H/ws" "$H/.config"

# run CMD: caretz exec --json in the home; RESULT is its JSON object, REFUSED its write refusals'
# subjects, one a line.
run() {
    RESULT=$(as_user "$SH" "$H" "$E2E_BIN" exec --json "${MODE[@]}" "$1" 2>/dev/null </dev/null)
    REFUSED=$(python3 -c 'import json,sys
d = json.loads(sys.argv[1])
print("\n".join(r["subject"] for r in d["refusals"] if r["kind"] == "write"))' "$RESULT" 2>&1)
}
refused() { grep -qxF -- "$1" <<<"$REFUSED"; }
# refused_below DIR: a write refusal for DIR or a path in it.
refused_below() { grep -q -- "^$1\(/\|$\)" <<<"$REFUSED"; }
unchanged() { cmp -s "$1" "$2"; }
missing() { [[ ! -e $1 && ! -L $1 ]]; }

# --- shell startup files ----------------------------------------------------------------------
run "echo 'touch ~/PWNED' >> ~/.bashrc"
check "~/.bashrc: an appended line is refused as a write" refused "$H/.bashrc"
check "... and the host's .bashrc is unchanged" unchanged "$H/.bashrc" /etc/skel/.bashrc
run "echo 'touch ~/PWNED' >> ~/.profile"
check "~/.profile: refused, unchanged" eval 'refused "$H/.profile" && unchanged "$H/.profile" /etc/skel/.profile'
for f in .bash_profile .bash_login .zshrc .zshenv .zprofile .pam_environment .xsessionrc .vimrc .tmux.conf .screenrc .emacs; do
    run "printf 'touch ~/PWNED\n' > ~/$f"
    check "~/$f (missing): refused as a write" refused "$H/$f"
    check "... and still missing on the host" missing "$H/$f"
done
run "mkdir -p ~/.config/fish/conf.d && echo 'touch ~/PWNED' > ~/.config/fish/conf.d/evil.fish"
check "fish's conf.d: refused" refused_below "$H/.config/fish"
check "... and nothing new in fish's folder" missing "$H/.config/fish/conf.d/evil.fish"
run "echo 'set -gx PATH ~/evil \$PATH' >> ~/.config/fish/config.fish"
check "fish's config.fish: refused" refused_below "$H/.config/fish"

# --- user services, autostart, the login environment -----------------------------------------
run "mkdir -p ~/.config/systemd/user && printf '[Service]\nExecStart=/bin/touch %%h/PWNED\n' > ~/.config/systemd/user/evil.service"
check "a systemd user unit: refused" refused "$H/.config/systemd"
check "... and ~/.config/systemd still missing" missing "$H/.config/systemd"
run "mkdir -p ~/.config/autostart && printf '[Desktop Entry]\nExec=touch ~/PWNED\n' > ~/.config/autostart/evil.desktop"
check "an autostart entry: refused" refused "$H/.config/autostart"
check "... and still missing" missing "$H/.config/autostart"
run "mkdir -p ~/.config/environment.d && echo LD_PRELOAD=/tmp/x.so > ~/.config/environment.d/x.conf"
check "environment.d: refused, still missing" eval 'refused "$H/.config/environment.d" && missing "$H/.config/environment.d"'
run "mv ~/.config ~/.c && mkdir -p ~/.config/autostart && echo x > ~/.config/autostart/evil.desktop"
check "moving ~/.config aside fails" eval '[[ -d $H/.config ]] && missing "$H/.c"'
check "... and autostart is still missing" missing "$H/.config/autostart"

# --- a PATH folder and Python's user site ------------------------------------------------------
run "mkdir -p ~/.local/bin && printf '#!/bin/sh\ntouch ~/PWNED\n' > ~/.local/bin/ls && chmod +x ~/.local/bin/ls"
check "~/.local/bin/ls: refused" refused_below "$H/.local"
check "... and ~/.local/bin still missing" missing "$H/.local/bin"
run "site=\$(python3 -c 'import site; print(site.getusersitepackages())') && mkdir -p \$site && echo 'import os; os.system(\"touch ~/PWNED\")' > \$site/evil.pth"
check "a .pth file in Python's user site: refused" refused_below "$H/.local"
check "... and no user site on the host" missing "$H/.local/lib"

# --- ordinary files ---------------------------------------------------------------------------
run "echo ok > ~/ws/a.txt && mkdir -p ~/ws/sub && echo ok > ~/ws/sub/b.txt"
check "ordinary files in a folder of the home still land" \
    eval '[[ $(cat "$H/ws/a.txt") == ok && $(cat "$H/ws/sub/b.txt") == ok ]]'
run "echo ok > ~/notes.txt"
check "a new file at the home's top is a write refusal (offered, not silently lost)" refused "$H/notes.txt"

# --- what the host does next: nothing planted runs --------------------------------------------
as_user /bin/bash "$H" bash -lic 'true' </dev/null >/dev/null 2>&1
as_user /bin/bash "$H" bash -lc 'ls >/dev/null' </dev/null >/dev/null 2>&1
as_user /usr/bin/zsh "$H" timeout 10 zsh -lic 'true' </dev/null >/dev/null 2>&1
as_user /usr/bin/fish "$H" fish -lc 'true' </dev/null >/dev/null 2>&1
as_user /bin/bash "$H" python3 -c pass </dev/null >/dev/null 2>&1
check "a login shell (bash, zsh, fish), ls and python3 on the host ran nothing planted" missing "$H/PWNED"

# --- a repository: an editor's tasks and an installed pre-commit hook ---------------------------
repo="$H/ws/repo"
host_git() { as_user "$SH" "$repo" git -c user.name=e2e -c user.email=e2e@example.invalid "$@"; }
u mkdir -p "$repo"
host_git init -q . && host_git commit -q --allow-empty -m init
u tee "$repo/.pre-commit-config.yaml" >/dev/null <<'YAML'
repos:
- repo: local
  hooks:
  - id: fine
    name: fine
    entry: "true"
    language: system
    pass_filenames: false
YAML
u cp "$repo/.pre-commit-config.yaml" "$H/pre-commit-config.orig"
as_user "$SH" "$repo" pre-commit install >/dev/null 2>&1
u sh -c "echo 'export A=1' > '$repo/.envrc'"
RESULT=$(as_user "$SH" "$repo" "$E2E_BIN" exec --json "${MODE[@]}" \
    "printf 'repos:\n- repo: local\n  hooks:\n  - id: evil\n    name: evil\n    entry: touch $H/PWNED\n    language: system\n    pass_filenames: false\n' > .pre-commit-config.yaml" 2>/dev/null </dev/null)
check "the config of an installed pre-commit hook: refused" contains "$RESULT" "\"subject\":\"$repo/.pre-commit-config.yaml\""
check "... and unchanged" unchanged "$repo/.pre-commit-config.yaml" "$H/pre-commit-config.orig"
said=$(as_user "$SH" "$repo" "$E2E_BIN" exec "${MODE[@]}" \
    "mkdir -p .vscode && printf '{\"tasks\":[{\"label\":\"x\",\"command\":\"touch $H/PWNED\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}' > .vscode/tasks.json" 2>&1 >/dev/null </dev/null)
check "a .vscode a command makes is moved aside, and Caretz says so" \
    contains "$said" "made $repo/.vscode (VS Code"
check "... so VS Code finds none on the host, and no empty one was made before" test ! -e "$repo/.vscode"
RESULT=$(as_user "$SH" "$repo" "$E2E_BIN" exec --json "${MODE[@]}" "echo 'touch $H/PWNED' >> .envrc" 2>/dev/null </dev/null)
check ".envrc: refused, unchanged" eval 'contains "$RESULT" "\"subject\":\"$repo/.envrc\"" && [[ $(cat "$repo/.envrc") == "export A=1" ]]'
RESULT=$(as_user "$SH" "$repo" "$E2E_BIN" exec --json "${MODE[@]}" "echo ok > notes.txt && cat notes.txt" 2>/dev/null </dev/null)
check "a new file at the repository's top still lands" test "$(cat "$repo/notes.txt" 2>/dev/null)" = ok
out=$(host_git commit -q --allow-empty -m "after the sandbox" 2>&1)
check "git commit on the host runs the user's pre-commit hook, and nothing planted" \
    eval 'missing "$H/PWNED" && [[ $(host_git rev-list --count HEAD) == 2 ]]'

# --- in a terminal: Allow once writes the wanted change; a repository made in the session -------
if [[ $MODE_NAME == session ]]; then
    start_pane "$(user_command_line /bin/bash "$H" "$E2E_BIN --ask-sandbox-off; echo CARETZ-EXITED; sleep 600")"
    wait_for_screen "caretz>" 15
    check "!echo alias >> ~/.bashrc shows the offer" ask "echo 'alias ll=\"ls -l\"' >> ~/.bashrc" 15
    check "... naming the refused write" wait_for_screen "write: $H/.bashrc" 2
    tmux_ send-keys -t main o
    prompt_back 15
    check "Allow once writes the alias into the host's .bashrc" \
        test "$(tail -1 "$H/.bashrc")" = "alias ll=\"ls -l\""
    type_command "git init -q ws/newrepo"
    prompt_back 15
    check "a repository made in the session gets no empty .vscode on the host" \
        test ! -e "$H/ws/newrepo/.vscode"
    type_command "mkdir ws/newrepo/.vscode && echo '{}' > ws/newrepo/.vscode/settings.json"
    prompt_back 15
    check "... and a .vscode a command makes there is moved aside" \
        wait_for_screen "moved to $H/ws/newrepo/.vscode.disabled-by-caretz" 5
    check "... so none is left on the host" test ! -e "$H/ws/newrepo/.vscode"
    tmux_ send-keys -t main C-d
    wait_for_screen "CARETZ-EXITED" 10
fi

finish
