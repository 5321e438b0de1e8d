#!/usr/bin/env bash
# Installs what is missing, builds, and starts Caretz with the given arguments.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
"$top/tools/setup.sh"
"$top/tools/build.sh" >&2
exec "$top/build/app/caretz" "$@"
