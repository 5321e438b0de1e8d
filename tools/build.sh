#!/usr/bin/env bash
# Configures and builds into build/ (extra cmake -D options may follow).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@" >/dev/null
cmake --build build -j"$(nproc)"
