#!/usr/bin/env bash
# The Debian package as an administrator meets it ($1 = the build directory): cpack builds
# caretz_VERSION_ARCH.deb, lintian finds no error or warning in it, apt-get installs it, the
# unprivileged test user runs `caretz exec` and `man caretz` from it, and apt-get removes it
# leaving nothing behind. This is the one test that installs /usr/bin/caretz (the others use
# /opt/caretz-e2e/...), and it removes it again on every way out.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
build=$1
export DEBIAN_FRONTEND=noninteractive
# Other helpers of the machine may hold dpkg's lock for a while.
apt_get() { apt-get -y -q -o DPkg::Lock::Timeout=600 "$@"; }
installed() { dpkg-query -W -f='${Status}' caretz 2>/dev/null | grep -q 'ok installed'; }

if installed; then
    fail "the package test needs a machine without the caretz package" \
        "caretz is installed here already, and the test would replace and then remove it"
    finish
    exit
fi
work=$(mktemp -d /tmp/caretz-package.XXXXXX)
chmod 0755 "$work"
own_home
ws=$(new_workspace)
cleanup() {
    installed && apt_get remove caretz >/dev/null 2>&1
    rm -rf "$work" "$TEST_HOME"
}
trap cleanup EXIT

cpack_out=$(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" 2>&1)
debs=("$work"/caretz_*.deb)
deb=${debs[0]}
name_ok() { [[ ${deb##*/} =~ ^caretz_[0-9]+\.[0-9]+\.[0-9]+_$(dpkg --print-architecture)\.deb$ ]]; }
if ! name_ok; then
    fail "cpack -G DEB builds caretz_VERSION_ARCH.deb" "$cpack_out"
    finish
    exit
fi
pass "cpack -G DEB builds ${deb##*/}"

field() { dpkg-deb --field "$deb" "$1"; }
depends=$(field Depends)
check "Depends has bubblewrap" contains ", $depends," ", bubblewrap,"
check "... and the libraries the binary links (dpkg-shlibdeps)" contains "$depends" "libc6 (>="
check "... libcurl too" contains "$depends" "libcurl"
check "maintainer, section and priority are set" \
    test "$(field Section)/$(field Priority)" = "admin/optional" -a -n "$(field Maintainer)"
check "the description has a synopsis and a long text" contains "$(field Description)" \
    $'sandbox\n Caretz is a terminal coding agent'
contents=$(dpkg-deb --contents "$deb")
for path in ./usr/bin/caretz ./usr/libexec/caretz/caretz-inside ./usr/share/man/man1/caretz.1.gz \
    ./usr/share/doc/caretz/copyright ./usr/share/doc/caretz/changelog.gz; do
    check "the package holds $path" contains "$contents" " $path"
done

lintian_out=$(as_user /bin/bash "$work" lintian --fail-on error,warning "$deb" 2>&1)
lintian_rc=$?
if ((lintian_rc == 0)); then pass "lintian finds no error or warning"; else
    fail "lintian finds no error or warning" "$lintian_out"
fi

install_out=$(apt_get install "$deb" 2>&1)
if installed; then pass "apt-get install ./${deb##*/} installs it"; else
    fail "apt-get install ./${deb##*/} installs it" "$install_out"
fi

# The user's own PATH finds it in /usr/bin; the sandbox works from the installed binary.
as_package_user() { as_user /bin/bash "$ws" env PATH=/usr/bin:/bin MANWIDTH=80 "$@"; }
probe=/etc/caretz-package-$$
OUT=$(as_package_user caretz exec "touch $probe; echo touch=\$?; echo kept > made-inside" 2>&1)
check "the user runs caretz exec from /usr/bin" test "$(as_package_user sh -c 'command -v caretz')" \
    = /usr/bin/caretz
check "... the sandbox refuses a write to /etc" contains "$OUT" "touch=1"
check "... which never reaches the host" test ! -e "$probe"
check "... while the workspace is writable" test "$(cat "$ws/made-inside" 2>/dev/null)" = kept
man_out=$(as_package_user man -P cat caretz 2>&1)
check "man caretz shows the installed manual page" contains "$man_out" "caretz exec"
check "... rendered, not roff source" not_contains "$man_out" ".TH"
check "... from /usr/share/man" test "$(as_package_user man -w caretz 2>&1)" = \
    /usr/share/man/man1/caretz.1.gz

remove_out=$(apt_get remove caretz 2>&1)
# Gone whole: no conffiles are left that would keep it in dpkg's database as config-files.
removed() {
    local status
    status=$(dpkg-query -W -f='${db:Status-Status}' caretz 2>/dev/null)
    [[ -z $status || $status == not-installed ]]
}
check "apt-get remove caretz removes it" removed
check "... dpkg lists no file of it" test -z "$(dpkg -L caretz 2>/dev/null)"
check "... the binaries, the manual page and the documentation are gone" \
    test ! -e /usr/bin/caretz -a ! -e /usr/libexec/caretz -a ! -e /usr/share/man/man1/caretz.1.gz \
    -a ! -e /usr/share/doc/caretz
[[ $failed -eq 0 ]] || echo "$remove_out"

finish
