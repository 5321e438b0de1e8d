#!/usr/bin/env bash
# Shell completions as a user meets them: `cmake --install` into a folder of the test's own,
# made visible to the shell through its own search path (XDG_DATA_DIRS for bash-completion and
# fish, fpath for zsh), then Tab pressed in a real shell in tmux as the unprivileged user.
# Usage: completions_test.sh bash|zsh|fish BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib.sh"
shell=$1
build_dir=$2
own_home
prefix=$(mktemp -d /tmp/caretz-completions.XXXXXX)
chmod 0755 "$prefix"
trap 'end_tmux; rm -rf "$TEST_HOME" "$prefix"' EXIT

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
case $shell in
    bash) installed=$prefix/share/bash-completion/completions/caretz ;;
    zsh) installed=$prefix/share/zsh/site-functions/_caretz ;;
    fish) installed=$prefix/share/fish/vendor_completions.d/caretz.fish ;;
esac
check "cmake --install puts the $shell completion where $shell looks" test -s "$installed"

# The profiles come from the user's config at the time Tab is pressed.
runuser -u "$E2E_USER" -- mkdir -p "$TEST_HOME/.config/caretz" "$TEST_HOME/.config/fish"
echo '{"profiles": {"nightly-e2e": {}, "staging-e2e": {"allow_docker": true}}}' |
    runuser -u "$E2E_USER" -- tee "$TEST_HOME/.config/caretz/config.json" >/dev/null
echo '{"profiles": {"other-config-e2e": {}}}' |
    runuser -u "$E2E_USER" -- tee "$TEST_HOME/other.json" >/dev/null
case $shell in
    bash) printf '%s\n' 'source /usr/share/bash-completion/bash_completion' "PS1='READY\$ '" ;;
    zsh) printf '%s\n' "fpath=($prefix/share/zsh/site-functions \$fpath)" \
        'autoload -Uz compinit && compinit -u' "PS1='READY\$ '" ;;
esac | runuser -u "$E2E_USER" -- tee "$TEST_HOME/.bashrc" "$TEST_HOME/.zshrc" >/dev/null
printf '%s\n' 'set -g fish_greeting' 'function fish_prompt; echo -n "READY\$ "; end' |
    runuser -u "$E2E_USER" -- tee "$TEST_HOME/.config/fish/config.fish" >/dev/null

# A new pane with a fresh shell, the installed caretz first in PATH.
fresh_shell() {
    start_pane "$(printf 'runuser -u %s -- env -i HOME=%q USER=%s PATH=%q XDG_DATA_DIRS=%q TERM=screen-256color LANG=C.UTF-8 %s -i' \
        "$E2E_USER" "$TEST_HOME" "$E2E_USER" "$prefix/bin:/usr/local/bin:/usr/bin:/bin" \
        "$prefix/share:/usr/share" "$shell")"
    wait_for_screen 'READY$' 15
}

# tab_after TEXT TABS: types TEXT into a fresh shell and presses Tab TABS times.
tab_after() {
    fresh_shell
    tmux_ send-keys -t main -l -- "$1"
    for _ in $(seq "$2"); do
        sleep 0.3
        tmux_ send-keys -t main Tab
    done
}
# A first Tab may only insert the choices' common start (the "o" of "ops" and "other"); fish
# lists them at once, zsh on the next Tab, bash on the next Tab that changes nothing.
case $shell in
    bash) list_tabs=3 ;;
    zsh) list_tabs=2 ;;
    fish) list_tabs=1 ;;
esac

tab_after 'caretz --perm' 1
check "$shell: caretz --perm<Tab> completes to --permission-timeout" \
    wait_for_screen 'caretz --permission-timeout' 10

tab_after 'caretz --profile ' "$list_tabs"
check "$shell: caretz --profile <Tab> offers the config's profiles" wait_for_screen 'staging-e2e' 10
check "$shell: ... all of them" contains "$(screen_text)" 'nightly-e2e'
check "$shell: ... and the built-in one" grep -qw ops <<<"$(screen_text | grep -v READY)"

tab_after "caretz --config $TEST_HOME/other.json --profile " "$list_tabs"
check "$shell: with --config FILE, the profiles come from FILE" wait_for_screen 'other-config-e2e' 10

tab_after 'caretz --permission-timeout 5' "$list_tabs"
check "$shell: a number for --permission-timeout gets its units offered" wait_for_screen '5h' 10

tab_after 'caretz --contin' 1
check "$shell: caretz --contin<Tab> completes to --continue" wait_for_screen 'caretz --continue' 10
tab_after 'caretz --resu' 1
check "$shell: caretz --resu<Tab> completes to --resume" wait_for_screen 'caretz --resume' 10

tab_after 'caretz doct' 1
check "$shell: subcommands complete (doct<Tab> is doctor)" wait_for_screen 'caretz doctor' 10

tab_after 'caretz exec --no-se' 1
check "$shell: a subcommand's options complete after it" wait_for_screen 'caretz exec --no-session' 10

tab_after 'caretz --provider ' "$list_tabs"
check "$shell: --provider offers the providers" wait_for_screen 'anthropic' 10

finish
