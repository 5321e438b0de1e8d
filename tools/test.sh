#!/usr/bin/env bash
# Installs what is missing, checks that the C and C++ sources match .clang-format, builds with
# warnings as errors and runs every end-to-end test (build/).
# Then builds once more, with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# (build-asan/), and runs the unit tests and the end-to-end tests labelled "sanitized" (every
# part of Caretz once) under it, and builds the libFuzzer targets with clang (build-fuzz/) and
# runs each for 10 seconds. The unit tests are built in build-asan/ only: compiling Catch2's
# assertions twice would cost minutes of every run.
# Every step runs even when an earlier one fails; the exit status says whether all passed.
# Runs as root: the end-to-end tests create an unprivileged user and run Caretz as that user.
# Arguments go to the ctest runs of build/ and build-asan/ (e.g. -R e2e_acp). Tests run three at
# a time, two under the sanitizers, which need the CPU more: the end-to-end tests spend most of
# their time waiting on terminals and sandboxes, and each has a home, workspace, tmux server and
# process names of its own (tests/e2e/lib.sh).
# CARETZ_TEST_SANITIZE=0 and CARETZ_TEST_FUZZ=0 skip those steps (the first, the unit tests too).
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/tools/setup.sh" --test
"$top/tools/build.sh" -DCARETZ_WERROR=ON -DBUILD_TESTING=ON -DCARETZ_UNIT_TESTS=OFF

status=0
step() { printf '\n== %s\n' "$*" >&2; }
elapsed() { printf '== %s took %ds\n' "$1" $((SECONDS - $2)) >&2; }

step "formatting (.clang-format)"
(cd "$top" && git ls-files -z '*.cpp' '*.h' '*.c' | xargs -0 clang-format --dry-run -Werror) ||
    status=1

start=$SECONDS
step "tests (build/)"
(cd "$top/build" && ctest --output-on-failure --timeout 600 -j3 "$@") || status=1
elapsed "tests" "$start"

if [[ ${CARETZ_TEST_SANITIZE:-1} != 0 ]]; then
    start=$SECONDS
    step "tests under AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/)"
    CC=clang CXX=clang++ cmake -S "$top" -B "$top/build-asan" -G Ninja -DCARETZ_WERROR=ON \
        -DBUILD_TESTING=ON -DCARETZ_SANITIZE=ON >/dev/null
    cmake --build "$top/build-asan" -j"$(nproc)"
    # The e2e_setup fixture of this build installs the sanitized binary for the end-to-end tests.
    (cd "$top/build-asan" &&
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            ctest --output-on-failure --timeout 900 -j2 -L sanitized "$@") || status=1
    elapsed "sanitizer build and tests" "$start"
fi

if [[ ${CARETZ_TEST_FUZZ:-1} != 0 ]]; then
    start=$SECONDS
    step "fuzz targets, a short run of each (build-fuzz/)"
    CC=clang CXX=clang++ cmake -S "$top" -B "$top/build-fuzz" -G Ninja -DBUILD_TESTING=ON \
        -DCARETZ_FUZZ=ON -DCARETZ_FUZZ_SECONDS=10 >/dev/null
    cmake --build "$top/build-fuzz" --target fuzz -j"$(nproc)"
    (cd "$top/build-fuzz" && ctest --output-on-failure -L fuzz -j"$(nproc)") || status=1
    elapsed "fuzzing" "$start"
fi

exit "$status"
