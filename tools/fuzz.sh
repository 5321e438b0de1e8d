#!/usr/bin/env bash
# A long fuzzing run: tools/fuzz.sh MINUTES [TARGET...] runs every fuzzer (or the ones named:
# refusal_detector, config, ...) for MINUTES each, as many at a time as there are cores, starting
# from the committed corpus in tests/fuzz/corpus/TARGET. Afterwards the inputs that reached code
# the corpus did not are kept there as found-* files (libFuzzer's -merge), so the next run, and
# every 10-second run of tools/test.sh, starts from them. Prints each target's executions, its
# coverage (edges, features) and the inputs it kept; a crash leaves its input in
# build-fuzz/crashes/TARGET-* and makes the script exit 1.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
minutes=${1:?usage: tools/fuzz.sh MINUTES [TARGET...]}
shift
[[ $minutes =~ ^[0-9]+$ && $minutes -gt 0 ]] || {
    echo "tools/fuzz.sh: MINUTES must be a whole number above 0, not \"$minutes\"" >&2
    exit 2
}

"$top/tools/setup.sh" --test
CC=clang CXX=clang++ cmake -S "$top" -B "$top/build-fuzz" -G Ninja -DBUILD_TESTING=ON \
    -DCARETZ_FUZZ=ON >/dev/null
cmake --build "$top/build-fuzz" --target fuzz -j"$(nproc)"

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    for dir in "$top"/tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crashes="$top/build-fuzz/crashes"
mkdir -p "$crashes"

# run TARGET: fuzzes it for the minutes given, then keeps what reached new code.
run() {
    local name=$1 bin="$top/build-fuzz/tests/fuzz/fuzz_$1" corpus="$top/tests/fuzz/corpus/$1"
    local new="$work/$name.new" kept="$work/$name.kept" log="$work/$name.log"
    mkdir -p "$new" "$kept"
    local status=0
    "$bin" "$new" "$corpus" -max_total_time=$((minutes * 60)) -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$crashes/$name-" >"$log" 2>&1 || status=$?
    # What the corpus already covers, then only what adds to it.
    cp -p "$corpus"/* "$kept"/
    local before
    before=$(find "$kept" -type f | wc -l)
    "$bin" -merge=1 "$kept" "$new" >"$log.merge" 2>&1 || status=$?
    local added=0 file
    for file in "$kept"/*; do
        [[ -e $corpus/$(basename "$file") ]] && continue
        cp "$file" "$corpus/found-$(basename "$file")"
        added=$((added + 1))
    done
    local runs cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | head -1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    printf '%-18s %12s runs  %-22s %4d inputs kept (corpus %d -> %d)%s\n' "$name" "${runs:-?}" \
        "${cov:-cov: ?}" "$added" "$before" "$((before + added))" \
        "$([[ $status -ne 0 ]] && echo "  CRASH or error: see $crashes/$name-* and build-fuzz/fuzz-$name.log")"
    cat "$log" "$log.merge" >"$top/build-fuzz/fuzz-$name.log"
    return "$status"
}

failed=0
running=0
for name in "${targets[@]}"; do
    [[ -x $top/build-fuzz/tests/fuzz/fuzz_$name ]] || {
        echo "tools/fuzz.sh: no fuzzer named $name" >&2
        failed=1
        continue
    }
    run "$name" &
    running=$((running + 1))
    if [[ $running -ge $(nproc) ]]; then
        wait -n || failed=1
        running=$((running - 1))
    fi
done
while [[ $running -gt 0 ]]; do
    wait -n || failed=1
    running=$((running - 1))
done
exit "$failed"
