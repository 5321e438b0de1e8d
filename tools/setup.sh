#!/usr/bin/env bash
# Installs what Caretz needs from Debian and nothing it already has.
# Usage: tools/setup.sh [--test]   (--test adds what the test suite drives: tmux, shells, sudo,
# lintian for the package, rsyslog for the audit trail in syslog, the toolchains whose caches the
# sandbox's private cache layer serves, ...)
# dpkg-dev's dpkg-shlibdeps gives the Debian package (cpack -G DEB) its library dependencies.
set -euo pipefail

build_packages=(g++ cmake ninja-build pkg-config libvterm-dev libutempter-dev nlohmann-json3-dev
    libcli11-dev catch2 libcurl4-openssl-dev libutf8proc-dev libncurses-dev bubblewrap man-db
    groff-base dpkg-dev)
test_packages=(tmux bash bash-completion zsh fish sudo strace util-linux procps psmisc openssh-server
    openssh-client iproute2 python3 clang libclang-rt-14-dev clang-format lintian rsyslog git
    pre-commit direnv golang-go cargo ccache python3-venv maven)

packages=("${build_packages[@]}")
if [[ "${1:-}" == "--test" ]]; then
    packages+=("${test_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
# The ACP test drives Caretz with the real client library from npm. Debian's npm package
# conflicts with a Node.js installed from elsewhere (which brings its own npm), so nodejs and
# npm come from Debian only when there is no npm at all.
if [[ "${1:-}" == "--test" ]] && ! command -v npm >/dev/null; then
    missing+=(nodejs npm)
fi
# The credential stores' test runs kubectl; any kubectl will do (one from a cloud SDK too), so
# Debian's comes only when there is none.
if [[ "${1:-}" == "--test" ]] && ! command -v kubectl >/dev/null; then
    missing+=(kubernetes-client)
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
    echo "caretz setup: missing Debian packages: ${missing[*]}; run this script as root or: sudo apt-get install ${missing[*]}" >&2
    exit 1
fi
echo "caretz setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
