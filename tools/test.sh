#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs the whole test suite.
# Runs as root: the end-to-end tests create an unprivileged user and run Caretz as that user.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/tools/setup.sh" --test
"$top/tools/build.sh" -DCARETZ_WERROR=ON -DBUILD_TESTING=ON
cd "$top/build"
exec ctest --output-on-failure --timeout 600 "$@"
