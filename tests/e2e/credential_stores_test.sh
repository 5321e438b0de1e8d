#!/usr/bin/env bash
# The credential stores ops people keep, as the unprivileged test user through `caretz exec` in
# session mode ($1 = session) or a fresh sandbox per command ($1 = fresh), in a home of the
# test's own with every store present: inside, each looks missing; sandbox.visible in the
# user's config gives one back and no other; a workspace cannot give one back; the detector
# reports a read of one as a hidden refusal.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
MODE=()
[[ ${1:-session} == fresh ]] && MODE=(--no-session)
SH=/bin/bash
SRC=$(cd "$(dirname "$0")/../.." && pwd)

own_home
trap 'rm -rf "$TEST_HOME"' EXIT
ws=$TEST_HOME/ws
xdg=$TEST_HOME/xdg-config  # where XDG_CONFIG_HOME puts gh, helm, gcloud, the browsers, Caretz
tag="e2e$$"

# A file to read in each default store (inside it, for the folders), below the home.
stores=(.kube/config .docker/config.json .netrc .git-credentials .config/git/credentials
    .config/gh/hosts.yml .npmrc .pypirc .vault-token .config/gcloud/credentials.db
    .azure/msal_token_cache.json .config/helm/registry/config.json
    .terraform.d/credentials.tfrc.json .password-store/prod/db.gpg
    .local/share/keyrings/login.keyring .mozilla/firefox/p.default/cookies.sqlite
    .config/google-chrome/Default/Cookies .config/chromium/Default/Cookies)
# The same tools' files where XDG_CONFIG_HOME moves them.
xdg_stores=(gh/hosts.yml helm/registry/config.json gcloud/credentials.db
    google-chrome/Default/Cookies chromium/Default/Cookies git/credentials)
# The files $KUBECONFIG names, outside ~/.kube.
kubeconfigs=("$TEST_HOME/clusters/prod.yaml" "$TEST_HOME/clusters/staging.yaml")
# What stays visible: the folders around hidden files, and files beside them.
visible_files=("$TEST_HOME/.docker/contexts/meta.json" "$TEST_HOME/.config/gh/config.yml"
    "$TEST_HOME/clusters/README")

secret_file() {  # PATH: a file that holds a secret naming it
    u mkdir -p "$(dirname "$1")"
    echo "secret-$tag:$1" | u tee "$1" >/dev/null
}
u mkdir -p "$ws"
for f in "${stores[@]}"; do secret_file "$TEST_HOME/$f"; done
for f in "${xdg_stores[@]}"; do secret_file "$xdg/$f"; done
for f in "${kubeconfigs[@]}" "${visible_files[@]}"; do secret_file "$f"; done
home_paths=()
for f in "${stores[@]}"; do home_paths+=("$TEST_HOME/$f"); done
xdg_paths=()
for f in "${xdg_stores[@]}"; do xdg_paths+=("$xdg/$f"); done
KUBECONFIG_VALUE="${kubeconfigs[0]}:${kubeconfigs[1]}"

# cat_each PATH...: one sandboxed command that reads every PATH (OUT and RC as caretz_as_user).
cat_each() {
    local cmd="" p
    for p in "$@"; do cmd+="cat $(printf %q "$p"); "; done
    caretz_as_user "$SH" "$ws" exec "${MODE[@]}" "$cmd"
}
looks_missing() {
    [[ $OUT == *"cat: $1: No such file or directory"* && $OUT != *"secret-$tag:$1"* ]]
}
readable() { [[ $OUT == *"secret-$tag:$1"* && $OUT != *"cat: $1:"* ]]; }
# check_each WHAT CONDITION PATH...: one check per path.
check_each() {
    local what=$1 condition=$2 p
    shift 2
    for p in "$@"; do check "${p#"$TEST_HOME"/} $what" "$condition" "$p"; done
}
user_config() {  # FILE JSON: a config file of the user's, written as the user
    u mkdir -p "$(dirname "$1")"
    echo "$2" | u tee "$1" >/dev/null
}

# --- every default store looks missing --------------------------------------------------------
E2E_ENV=(KUBECONFIG="$KUBECONFIG_VALUE")
cat_each "${home_paths[@]}" "${kubeconfigs[@]}" "${visible_files[@]}"
check_each "looks missing inside (No such file or directory)" looks_missing \
    "${home_paths[@]}" "${kubeconfigs[@]}"
check_each "stays readable beside the hidden ones" readable "${visible_files[@]}"

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'command ls -A ~/.docker ~/.config/gh'
check "~/.docker and ~/.config/gh still list their other entries" \
    test "$(printf '%s' "$OUT" | tr -d '\r' | grep -cx -e contexts -e config.yml)" -eq 2
check "... but not config.json" not_contains "$OUT" config.json
check "... nor hosts.yml" not_contains "$OUT" hosts.yml

caretz_as_user "$SH" "$ws" exec "${MODE[@]}" \
    'echo x > ~/.netrc; echo x > ~/.docker/config.json; echo x > ~/.config/gh/hosts.yml; mkdir ~/.kube'
check "writing where a hidden store is fails with Read-only file system" \
    test "$(printf '%s' "$OUT" | grep -c 'Read-only file system')" -ge 4
check "... and the stores on the host are unchanged" \
    grep -qx "secret-$tag:$TEST_HOME/.netrc" "$TEST_HOME/.netrc"
check "... all of them" grep -qx "secret-$tag:$TEST_HOME/.docker/config.json" \
    "$TEST_HOME/.docker/config.json"

# --- where XDG_CONFIG_HOME moves a tool's folder, both places are hidden ----------------------
E2E_ENV=(XDG_CONFIG_HOME="$xdg" KUBECONFIG="$KUBECONFIG_VALUE")
cat_each "${xdg_paths[@]}" "${home_paths[@]}"
check_each "looks missing with XDG_CONFIG_HOME set" looks_missing "${xdg_paths[@]}" "${home_paths[@]}"

# --- sandbox.visible in the user's config gives back those it names, no others ---------------
user_config "$TEST_HOME/.config/caretz/config.json" '{"sandbox": {"visible": ["~/.netrc", "~/.kube"]}}'
E2E_ENV=(KUBECONFIG="$KUBECONFIG_VALUE")
cat_each "${home_paths[@]}" "${kubeconfigs[@]}"
check_each "is readable once sandbox.visible names it" readable \
    "$TEST_HOME/.netrc" "$TEST_HOME/.kube/config"
others=()
for p in "${home_paths[@]}" "${kubeconfigs[@]}"; do
    [[ $p == "$TEST_HOME/.netrc" || $p == "$TEST_HOME/.kube/config" ]] || others+=("$p")
done
check_each "stays hidden when sandbox.visible names others" looks_missing "${others[@]}"
rm -f "$TEST_HOME/.config/caretz/config.json"

# With XDG_CONFIG_HOME set, Caretz's config is there, and a store is named where it is.
user_config "$xdg/caretz/config.json" "{\"sandbox\": {\"visible\": [\"$xdg/gh/hosts.yml\"]}}"
E2E_ENV=(XDG_CONFIG_HOME="$xdg")
cat_each "$xdg/gh/hosts.yml" "$TEST_HOME/.config/gh/hosts.yml" "$xdg/helm/registry/config.json"
check "\$XDG_CONFIG_HOME/gh/hosts.yml is readable once sandbox.visible names it" \
    readable "$xdg/gh/hosts.yml"
check "... while ~/.config/gh/hosts.yml stays hidden" looks_missing "$TEST_HOME/.config/gh/hosts.yml"
check "... and so does \$XDG_CONFIG_HOME/helm" looks_missing "$xdg/helm/registry/config.json"
rm -f "$xdg/caretz/config.json"
E2E_ENV=()

# --- a workspace cannot give a store back -----------------------------------------------------
# Caretz reads no config from a workspace: one where a workspace config would be has no effect.
user_config "$ws/.caretz/config.json" '{"sandbox": {"visible": ["~/.pypirc"]}}'
user_config "$ws/.config/caretz/config.json" '{"sandbox": {"visible": ["~/.pypirc"]}}'
cat_each "$TEST_HOME/.pypirc"
check "a workspace's config naming a store has no effect" looks_missing "$TEST_HOME/.pypirc"
rm -rf "$ws/.caretz" "$ws/.config"
# Nor can a command inside write the user's config for the next sandbox.
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" \
    "mkdir -p ~/.config/caretz; echo '{\"sandbox\": {\"visible\": [\"~/.pypirc\"]}}' > ~/.config/caretz/config.json"
check "a command inside cannot write the user's config" test ! -e "$TEST_HOME/.config/caretz/config.json"
cat_each "$TEST_HOME/.pypirc"
check "... so the store stays hidden" looks_missing "$TEST_HOME/.pypirc"

# --- sandbox.visible naming anything else stops Caretz, naming the entry ----------------------
cfg=$TEST_HOME/.config/caretz/config.json
user_config "$cfg" $'{\n  "sandbox": {\n    "visible": ["~/notes"]\n  }\n}'
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'echo ran'
check "sandbox.visible naming a path that is not hidden by default exits 2" test "$RC" -eq 2
check "... naming the file, the line, the key and the entry" \
    contains "$OUT" "$cfg:3: \"sandbox.visible\" has \"~/notes\", which is not hidden by default"
check "... and runs nothing" not_contains "$OUT" ran
user_config "$cfg" '{"sandbox": {"visible": ["~/.ssh"]}}'
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'echo ran'
check "sandbox.visible cannot give back ~/.ssh" contains "$OUT" "\"~/.ssh\", which stays hidden always"
user_config "$cfg" '{"sandbox": {"visible": ["~/.kube/config"]}}'
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" 'echo ran'
check "sandbox.visible names a store whole" contains "$OUT" "name \"~/.kube\" to make it visible"
rm -f "$cfg"

# --- the detector reports a read of a hidden store as a hidden refusal ------------------------
refusal_of() {  # SUBJECT: true when OUT (exec --json) holds a hidden refusal for SUBJECT
    # stderr's notice that nobody was asked comes with the JSON line in OUT.
    printf '%s\n' "$OUT" | grep '^{' | python3 -c '
import json, sys
r = json.load(sys.stdin)
sys.exit(0 if {"kind": "hidden", "subject": sys.argv[1]} in
         [{"kind": x["kind"], "subject": x["subject"]} for x in r["refusals"]] else 1)' "$1"
}
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" --json 'cat ~/.kube/config'
check "exec --json reports cat ~/.kube/config as a hidden refusal" refusal_of "$TEST_HOME/.kube/config"
caretz_as_user "$SH" "$ws" exec "${MODE[@]}" --json 'cat ~/.docker/config.json'
check "... and a hidden file whose folder is visible too" refusal_of "$TEST_HOME/.docker/config.json"

# --- a sandbox cannot start in a hidden store -------------------------------------------------
caretz_as_user "$SH" "$TEST_HOME/.kube" exec "${MODE[@]}" 'echo ran'
check "started in ~/.kube, caretz exec exits 125" test "$RC" -eq 125
check "... saying the folder is hidden and how to give it back" \
    contains "$OUT" "$TEST_HOME/.kube, is hidden from sandboxed commands"
check "... naming sandbox.visible" contains "$OUT" "sandbox.visible"
check "... and runs nothing" not_contains "$OUT" ran

# --- --help, the README and the man page list every default store -----------------------------
caretz_as_user "$SH" "$ws" --help
help=$(printf '%s' "$OUT" | tr '\n' ' ')
readme=$(cat "$SRC/README.md")
man_text=$(MANWIDTH=2000 man -l "$SRC/man/caretz.1" 2>/dev/null)
listed_everywhere() {  # STORE below ~
    local path="~/$1"
    [[ $help == *"$path"* && $readme == *"\`$path\`"* && $man_text == *"$path"* ]]
}
for store in .kube .docker/config.json .netrc .git-credentials .config/git/credentials \
    .config/gh/hosts.yml .npmrc .pypirc .vault-token .config/gcloud .azure .config/helm \
    .terraform.d/credentials.tfrc.json .password-store .local/share/keyrings .mozilla \
    .config/google-chrome .config/chromium; do
    check "--help, README and man page list ~/$store" listed_everywhere "$store"
done
check "--help names sandbox.visible" contains "$help" "sandbox.visible"
check "--help names \$KUBECONFIG" contains "$help" "\$KUBECONFIG"

finish
