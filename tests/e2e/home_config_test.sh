#!/usr/bin/env bash
# The home's configuration is not the workspace, as the unprivileged test user in session mode
# ($1 = session) or a fresh sandbox per command ($1 = fresh): in a used home (the folders of
# docker, ansible, IPython, Gradle, Maven, pre-commit's cache, bash-completion, the session bus,
# a window manager, about half of the dotfiles), started in the home, sandboxed writes to a broad
# sample of what host programs read as configuration or run later, most of which no list names,
# and to new dot entries, leave every dot entry of the host's home as it was. Then a login
# shell, python3, sqlite3 and git on the host run nothing planted, while the user's own files at
# every depth still land.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-}"
SH=/bin/bash

own_home
trap 'end_tmux; rm -rf "$TEST_HOME"' EXIT
H=$TEST_HOME

# A used home: the tools' folders, and about half of the files they read.
u mkdir -p "$H/.docker/cli-plugins" "$H/.ansible/plugins" "$H/.ipython/profile_default/startup" \
    "$H/.gradle" "$H/.m2" "$H/.cache/pre-commit" "$H/.local/share/bash-completion" \
    "$H/.local/share/dbus-1" "$H/.config/i3" "$H/.npm" "$H/.cargo" "$H/.mozilla-free" \
    "$H/projects/app/src"
u sh -c "echo 'set editing-mode emacs' > $H/.inputrc"
u sh -c "echo '.headers on' > $H/.sqliterc"
u sh -c "echo 'timeout = 30' > $H/.wgetrc"
u sh -c "printf '[user]\n\tname = e2e\n\temail = e2e@example.invalid\n' > $H/.gitconfig"
u sh -c "echo 'bindsym Mod1+Return exec xterm' > $H/.config/i3/config"
u sh -c "echo '<settings/>' > $H/.m2/settings.xml"
u sh -c "echo 'org.gradle.daemon=true' > $H/.gradle/gradle.properties"

# Every dot entry of the home, its contents included, as a list of paths, types and digests;
# Caretz's own state (the audit log, the search record) is left out.
dot_state() {
    (cd "$H" && find . -mindepth 1 -path ./.local/state -prune -o -path './[!.]*' -prune -o \
        -printf '%p %y %s\n' | sort
        find . -mindepth 1 -path ./.local/state -prune -o -path './[!.]*' -prune -o -type f \
            -print0 | sort -z | xargs -0 -r md5sum)
}
before=$(dot_state)

# run CMD: caretz exec --json in the home; RESULT is its JSON object.
run() { RESULT=$(as_user "$SH" "$H" "$E2E_BIN" exec --json "${MODE[@]}" "$1" 2>/dev/null </dev/null); }
refused_below() {
    python3 -c 'import json,sys
d = json.loads(sys.argv[1])
sys.exit(not any(r["kind"] == "write" and (r["subject"] == sys.argv[2] or r["subject"].startswith(sys.argv[2] + "/"))
                 for r in d["refusals"]))' "$RESULT" "$1"
}

planted="touch $H/PWNED"
# Existing files no list names: readline's, sqlite3's (.shell runs a program), wget's, git's.
for f in .inputrc .sqliterc .wgetrc .gitconfig; do
    run "echo '.shell $planted' >> ~/$f"
    check "~/$f (exists, no list names it): refused as a write" refused_below "$H/$f"
done
# Missing files in existing folders, and new folders in them.
for f in .docker/cli-plugins/docker-evil .ipython/profile_default/startup/00-evil.py \
    .gradle/init.d/evil.gradle \
    .local/share/bash-completion/completions/git .local/share/dbus-1/services/evil.service \
    .ansible/plugins/evil.py .config/i3/evil .m2/extensions.xml .cargo/bin/evil; do
    run "mkdir -p \$(dirname ~/$f) && echo '$planted' > ~/$f && chmod +x ~/$f"
    check "~/$f: refused as a write" refused_below "$H/${f%%/*}"
done
# The tools' caches take writes in the workspace's private layer, never in the host's cache (the
# check of every dot entry below proves the host's unchanged).
for f in .cache/pre-commit/evil.pth .npm/evil; do
    run "mkdir -p \$(dirname ~/$f) && echo '$planted' > ~/$f"
    check "~/$f: a cache, written in the private layer and not refused" \
        eval '[[ $RESULT == *"\"exit_code\": 0"* || $RESULT == *"\"exit_code\":0"* ]] && ! refused_below "$H/${f%%/*}"'
    check "... and kept in Caretz's store, not the host's cache" \
        test -n "$(find "$H/.local/state/caretz/cache" -path "*${f#.*/}" 2>/dev/null)"
done
run "echo '$planted' >> ~/.config/i3/config"
check "a window manager's config: refused" refused_below "$H/.config"
# New dot entries at the home's top, a moved one, and one moved in from the user's own files.
run "echo '$planted' > ~/.newtoolrc"
check "a new dot file at the home's top: refused" refused_below "$H/.newtoolrc"
run "mkdir ~/.newtool"
check "a new dot folder at the home's top: refused" refused_below "$H/.newtool"
run "mv ~/.m2 ~/m2-aside"
check "moving a dot folder aside: refused as a write" refused_below "$H/m2-aside"
run "echo '$planted' > ~/projects/x && mv ~/projects/x ~/.bash_login"
check "moving a user's file to a dot name: refused" refused_below "$H/.bash_login"

check "every dot entry of the host's home is as it was, and none is new" \
    eval '[[ "$(dot_state)" == "$before" ]]'

# The user's own files at every depth still land.
run "echo ok > ~/projects/app/src/main.c && mkdir -p ~/projects/new/deep && echo ok > ~/projects/new/deep/f"
check "files in the user's own folders land" \
    eval '[[ $(cat "$H/projects/app/src/main.c") == ok && $(cat "$H/projects/new/deep/f") == ok ]]'
run "echo ok > ~/notes.txt"
check "a new file at the home's top is a write refusal (offered, not silently lost)" \
    refused_below "$H/notes.txt"

# What the host does next.
as_user /bin/bash "$H" bash -lic 'true' </dev/null >/dev/null 2>&1
as_user /bin/bash "$H" python3 -c pass </dev/null >/dev/null 2>&1
as_user /bin/bash "$H" sqlite3 :memory: .quit </dev/null >/dev/null 2>&1
as_user /bin/bash "$H/projects" sh -c 'git init -q app && cd app && git commit -q --allow-empty -m x' \
    </dev/null >/dev/null 2>&1
check "a login shell, python3, sqlite3 and git commit on the host ran nothing planted" \
    test ! -e "$H/PWNED"

finish
