#!/usr/bin/env bash
# ctest fixture, run as root before the end-to-end tests: creates the unprivileged user the
# tests run Caretz as (with a sudo password, as on an ops laptop) and installs the binaries
# where that user can reach them.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

if [[ $(id -u) -ne 0 ]]; then
    echo "the end-to-end tests must start as root: they create the user $E2E_USER" >&2
    exit 1
fi
if ! id "$E2E_USER" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$E2E_USER"
fi
echo "$E2E_USER:$E2E_PASSWORD" | chpasswd
echo "$E2E_USER ALL=(ALL:ALL) ALL" >/etc/sudoers.d/caretz-e2e
chmod 0440 /etc/sudoers.d/caretz-e2e


# caretz, and caretz-inside where caretz looks for it (app/CMakeLists.txt).
install -D -m 0755 "$1" "$E2E_BIN"
install -D -m 0755 "$2" "$(dirname "$E2E_BIN")/../libexec/caretz/caretz-inside"
echo "e2e user $E2E_USER ready; caretz installed at $E2E_BIN"
