#!/usr/bin/env bash
# Caretz benchmarks against codex sandbox, srt and bare bwrap (DESIGN.md section 11).
#
# Usage (as root): bench/run.sh [--rev REV] [--baseline REV] [--quick] [-n N] [--reps N]
#                               [--skip percommand,throughput,detection,baseline,repositories]
#
# Installs what it needs (Debian packages; the npm peers into bench/peers/node_modules), builds
# Caretz (Release) into build-bench/, creates the unprivileged user caretz-bench, runs
# bench/bench.py as that user (root behaves differently: sudo, permissions), then writes
# bench/RESULTS.md and prints it; exits 1 when a target is missed. About 12 to 16 minutes on 2
# cores; --quick about one.
# --rev REV benchmarks a commit (exported with git archive into build-bench/rev-src) instead of the
# working tree; the bench itself always comes from the working tree. --baseline REV also builds
# that commit (into build-bench/baseline/) and measures its detection cost beside this build's,
# alternating, --reps times each (compare the ratio: absolute times move with the machine's load),
# and uses it as the "without" side of the repository watch's per-command cost (a commit from
# before the watch, e.g. 6679f54).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build="$repo/build-bench"
bench_user=caretz-bench

rev=""
baseline=""
bench_args=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --rev) rev=${2:?--rev needs a revision}; shift 2 ;;
        --baseline) baseline=${2:?--baseline needs a revision}; shift 2 ;;
        *) bench_args+=("$1"); shift ;;
    esac
done

if [[ $(id -u) -ne 0 ]]; then
    echo "bench: run me as root: I install packages and run the bench as the user $bench_user" >&2
    exit 1
fi

# --- Debian packages: Caretz's build, then what the bench drives --------------------------------
"$repo/tools/setup.sh"
# ripgrep and socat: srt refuses to start without them.
bench_packages=(python3 util-linux bubblewrap gcc ripgrep socat procps git time strace)
missing=()
for p in "${bench_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Node may come from elsewhere (NodeSource's nodejs carries its own npm): look for the commands.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "bench: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- The peers from npm (versions pinned in bench/peers/package.json) ----------------------------
# A peer that cannot be installed is not fatal: its row in the table says why it did not run.
echo "bench: installing the npm peers into bench/peers/node_modules" >&2
mkdir -p "$build"
if ! (cd "$repo/bench/peers" && npm install --no-audit --no-fund --loglevel=error \
        >"$build/npm-install.log" 2>&1); then
    echo "bench: npm install failed (see build-bench/npm-install.log); the peers it could not" \
         "install are reported as not runnable" >&2
fi

# --- Caretz (Release) and the PTY drain ----------------------------------------------------------
# build_caretz REV|"" BUILD_DIR: a Release caretz from that commit (or the working tree).
build_caretz() {
    local from=$1 into=$2 source_dir=$repo
    if [[ -n $from ]]; then
        source_dir="$into-src"
        rm -rf "$source_dir"
        mkdir -p "$source_dir"
        git -C "$repo" archive "$from" | tar -x -C "$source_dir"
    fi
    echo "bench: building Caretz (Release) from ${from:-the working tree} in ${into#$repo/}/" >&2
    cmake -S "$source_dir" -B "$into" -G Ninja -DBUILD_TESTING=OFF \
        -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$into" --target caretz >/dev/null
    chmod o+rx "$into" "$into/app" "$into/libexec" "$into/libexec/caretz"
}
caretz_build="$build"
if [[ -n $rev ]]; then
    caretz_build="$build/rev"
fi
build_caretz "$rev" "$caretz_build"
if [[ -n $baseline ]]; then
    build_caretz "$baseline" "$build/baseline"
    bench_args+=(--baseline-caretz "$build/baseline/app/caretz"
                 --baseline-commit "$(git -C "$repo" rev-parse --short "$baseline")")
fi
mkdir -p "$build/bench"
gcc -O3 -Wall -Wextra -o "$build/bench/ptyrun" "$repo/bench/ptyrun.c"

# --- The unprivileged user and its workspace ----------------------------------------------------
if ! id "$bench_user" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$bench_user"
fi
home=$(getent passwd "$bench_user" | cut -d: -f6)
workspace="$home/bench-ws"
out="$home/bench-out"
rm -rf "$workspace" "$out"
install -d -o "$bench_user" -g "$bench_user" "$workspace" "$out"
for f in README.md notes.txt Makefile; do
    echo "a file in the bench workspace" | install -o "$bench_user" -g "$bench_user" /dev/stdin \
        "$workspace/$f"
done
for d in "$build" "$caretz_build" "$caretz_build/app" "$build/bench" "$repo/bench" \
         "$repo/bench/peers" "$build/baseline" "$build/baseline/app"; do
    chmod o+rx "$d" 2>/dev/null || true
done

if [[ -n $rev ]]; then
    commit=$(git -C "$repo" rev-parse --short "$rev")
else
    commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')
    if [[ -n $(git -C "$repo" status --porcelain -- . ':!bench' ':!README.md' 2>/dev/null) ]]; then
        commit="$commit + uncommitted changes"
    fi
fi

# --- Run, as the unprivileged user, with a clean environment ------------------------------------
echo "bench: running as $bench_user (see bench/RESULTS.md for the commands)" >&2
# bench.py exits 1 when a target is missed, after writing RESULTS.md; so does this script.
status=0
runuser -u "$bench_user" -- env -i HOME="$home" USER="$bench_user" LOGNAME="$bench_user" \
    SHELL=/bin/bash PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TERM=xterm-256color \
    /usr/bin/python3 "$repo/bench/bench.py" \
        --caretz "$caretz_build/app/caretz" --ptyrun "$build/bench/ptyrun" \
        --peers "$repo/bench/peers/node_modules" --workspace "$workspace" --out "$out" \
        --commit "$commit" --notes "$repo/bench/NOTES.md" ${bench_args[@]+"${bench_args[@]}"} ||
    status=$?

[[ -f $out/RESULTS.md ]] || exit "$status"
cp "$out/RESULTS.md" "$repo/bench/RESULTS.md"
cat "$repo/bench/RESULTS.md"
if [[ $status -ne 0 ]]; then
    echo "bench: a target was missed (see the table above), or the bench failed" >&2
fi
exit "$status"
