#!/usr/bin/env bash
# The private cache layer (DESIGN.md section 4) with npm, pip in a python3-venv, pre-commit and
# Maven, offline, in a home whose caches are warm: the sandbox installs from what the host's caches
# hold, writes new entries into the layer, and a later sandbox of the workspace reuses them;
# the host's caches stay byte-for-byte as they were; an entry planted in pre-commit's cache
# (the `.pth` that ran on the host at the next `git commit`) never reaches the host's.
# Usage: cache_layer_tools_test.sh [session|fresh]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cache_layer_lib.sh"
sandbox_mode "${1:-}"
own_home
ws=$(new_workspace)
trap 'rm -rf "$TEST_HOME"' EXIT

# npm: two packages packed on the host (with a cache of their own: npm pack stores what it
# packs); the host's npm cache holds one of them.
# pip: an sdist whose build backend (in the sdist, so nothing comes from an index) logs each
# build to $E2E_BUILDS when set; pip caches the wheel it builds.
# pre-commit: a repository in the workspace whose local Python hook has its environment in the
# host's ~/.cache/pre-commit, installed as git's pre-commit hook.
user_sh 'set -e
    for p in hostpkg sbxpkg; do
        mkdir -p ~/pkgs/$p
        printf "{\"name\":\"%s\",\"version\":\"1.0.0\",\"main\":\"index.js\"}\n" $p > ~/pkgs/$p/package.json
        echo "module.exports = \"from $p\";" > ~/pkgs/$p/index.js
        (cd ~/pkgs && npm pack -q --cache ~/pack-cache ./$p >/dev/null)
    done
    npm cache add ~/pkgs/hostpkg-1.0.0.tgz
    mkdir -p ~/pipsrc/e2epip-1.0 ~/dist
    printf "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n" \
        > ~/pipsrc/e2epip-1.0/pyproject.toml
    cat > ~/pipsrc/e2epip-1.0/backend.py <<"PY"
import os, zipfile
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if "E2E_BUILDS" in os.environ:
        with open(os.environ["E2E_BUILDS"], "a") as log:
            log.write("built\n")
    info = "e2epip-1.0.dist-info/"
    files = {"e2epip.py": "WHO = \"e2epip\"\n",
             info + "METADATA": "Metadata-Version: 2.1\nName: e2epip\nVersion: 1.0\n",
             info + "WHEEL": "Wheel-Version: 1.0\nGenerator: e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    wheel = "e2epip-1.0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr(info + "RECORD", "".join(n + ",,\n" for n in files) + info + "RECORD,,\n")
    return wheel
PY
    tar -C ~/pipsrc -czf ~/dist/e2epip-1.0.tar.gz e2epip-1.0
    mkdir -p ~/.cache/pip && echo host-entry > ~/.cache/pip/marker'
check "setup: npm's cache on the host holds hostpkg" test -d "$TEST_HOME/.npm/_cacache/content-v2"

# integrity FILE: npm's integrity string of FILE.
integrity() { echo "sha512-$(sha512sum "$1" | cut -d' ' -f1 | python3 -c 'import base64,sys; print(base64.b64encode(bytes.fromhex(sys.stdin.read().strip())).decode())')"; }
# lock NAME...: package.json and a package-lock.json of the workspace's npm project that name
# the packages as the registry would serve them, so `npm ci --offline` takes them from the
# cache by their integrity or fails with ENOTCACHED.
lock() {
    local deps="" locked="" p
    for p in "$@"; do
        deps+="${deps:+,}\"$p\":\"1.0.0\""
        locked+=",\"node_modules/$p\":{\"version\":\"1.0.0\",\"resolved\":\"https://registry.npmjs.org/$p/-/$p-1.0.0.tgz\",\"integrity\":\"$(integrity "$TEST_HOME/pkgs/$p-1.0.0.tgz")\"}"
    done
    u mkdir -p "$ws/npm"
    echo "{\"name\":\"ws\",\"version\":\"1.0.0\",\"dependencies\":{$deps}}" | u tee "$ws/npm/package.json" >/dev/null
    echo "{\"name\":\"ws\",\"version\":\"1.0.0\",\"lockfileVersion\":3,\"requires\":true,\"packages\":{\"\":{\"name\":\"ws\",\"version\":\"1.0.0\",\"dependencies\":{$deps}}$locked}}" |
        u tee "$ws/npm/package-lock.json" >/dev/null
}

u bash -c "cd '$ws' && git init -q && cat > .pre-commit-config.yaml" <<'EOF'
repos:
- repo: local
  hooks:
  - id: e2e-hook
    name: e2e python hook
    entry: python -c "print('hook ran')"
    language: python
    pass_filenames: false
    verbose: true
EOF
user_sh "cd '$ws' && git add -A && pre-commit install >/dev/null && pre-commit install-hooks >/dev/null 2>&1"
env_dir=$(ls -d "$TEST_HOME"/.cache/pre-commit/repo*/py_env-* 2>/dev/null | head -1)
check "setup: the hook's environment is in the host's pre-commit cache" test -n "$env_dir"

# Maven: a repository of files in the home (what a company's mirror would serve) with two build
# extensions, and the plexus-utils Maven adds to each; the host's ~/.m2/repository holds the
# first from a host build. Java takes the home from the password file, not $HOME: each run
# names this test's home.
mvn_project() {  # mvn_project DIR EXTENSION: a project whose build needs that extension
    u mkdir -p "$1"
    u tee "$1/pom.xml" >/dev/null <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>e2e</groupId><artifactId>app</artifactId><version>1.0</version><packaging>pom</packaging>
<build><extensions><extension><groupId>e2e</groupId><artifactId>$2</artifactId>
<version>1.0</version></extension></extensions></build></project>
POM
}
user_sh 'set -e
    jar() {  # jar GROUP-FOLDER ARTIFACT VERSION
        local at=~/mvnrepo/$1/$2/$3
        mkdir -p $at
        python3 -c "import sys, zipfile
with zipfile.ZipFile(sys.argv[1], \"w\") as z: z.writestr(\"META-INF/MANIFEST.MF\", \"Manifest-Version: 1.0\\n\")" $at/$2-$3.jar
        printf "<project><modelVersion>4.0.0</modelVersion><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version></project>\n" \
            "$(echo $1 | tr / .)" $2 $3 > $at/$2-$3.pom
    }
    jar e2e hostext 1.0; jar e2e sbxext 1.0; jar org/codehaus/plexus plexus-utils 1.1
    printf "<settings><mirrors><mirror><id>files</id><mirrorOf>*</mirrorOf><url>file://%s/mvnrepo</url></mirror></mirrors></settings>\n" ~ > ~/mvn-settings.xml'
mvn_project "$ws/mvn-host" hostext
mvn_project "$ws/mvn" sbxext
mvn="mvn -B -q -s ~/mvn-settings.xml -Duser.home=$TEST_HOME validate"
OUT=$(user_sh "cd '$ws/mvn-host' && $mvn && echo built" 2>&1)
check "setup: Maven builds on the host" contains "$OUT" "built"
check "... and its repository holds hostext" \
    test -e "$TEST_HOME/.m2/repository/e2e/hostext/1.0/hostext-1.0.jar"
before=$(snapshot .npm .cache .m2)

# --- npm ---------------------------------------------------------------------------------------
lock hostpkg
in_sandbox "$ws/npm" 'npm ci --offline --no-audit --no-fund && node -p "require(\"hostpkg\")"'
check "$MODE_NAME: npm ci --offline installs what the host's npm cache holds" test "$RC" -eq 0
check "... and the package loads" contains "$OUT" "from hostpkg"
in_sandbox "$ws/npm" "npm cache add ~/pkgs/sbxpkg-1.0.0.tgz && echo added"
check "$MODE_NAME: npm stores a new entry in its cache in the sandbox" contains "$OUT" "added"
lock hostpkg sbxpkg
in_sandbox "$ws/npm" 'npm ci --offline --no-audit --no-fund && node -p "require(\"sbxpkg\")"'
check "$MODE_NAME: a later sandbox installs offline what an earlier one cached" \
    test "$RC" -eq 0
check "... from the layer" contains "$OUT" "from sbxpkg"
# On the host, against a copy of its npm cache (npm writes its logs there).
OUT=$(user_sh "cp -a ~/.npm ~/npm-copy && cd '$ws/npm' && rm -rf node_modules &&
    npm ci --offline --no-audit --no-fund --cache ~/npm-copy" 2>&1)
check "... while the host's npm cache does not hold it" contains "$OUT" "ENOTCACHED"

# --- pip in a venv -----------------------------------------------------------------------------
install_e2epip="E2E_BUILDS='$ws/builds.log' .venv/bin/pip install -q --no-index --no-build-isolation --force-reinstall --find-links ~/dist e2epip && .venv/bin/python -c 'import e2epip; print(e2epip.WHO)'"
in_sandbox "$ws" "python3 -m venv .venv && $install_e2epip"
check "$MODE_NAME: pip in a venv builds and installs a package" test "$RC" -eq 0
check "... which imports" contains "$OUT" "e2epip"
check "... with pip's cache on (no warning that it is disabled)" not_contains "$OUT" "disabled"
in_sandbox "$ws" "$install_e2epip"
check "$MODE_NAME: a later sandbox installs it again" test "$RC" -eq 0
check "... from the wheel the first one cached, without building it again" \
    test "$(grep -c built "$ws/builds.log")" -eq 1

# --- Maven ---------------------------------------------------------------------------------------
in_sandbox "$ws/mvn-host" "$mvn -o && echo built"
check "$MODE_NAME: Maven builds offline with what the host's repository holds" contains "$OUT" "built"
in_sandbox "$ws/mvn" "$mvn && ls ~/.m2/repository/e2e"
check "$MODE_NAME: Maven stores a new artifact in its repository in the sandbox" test "$RC" -eq 0
check "... beside the host's" contains "$OUT" $'hostext\nsbxext'
in_sandbox "$ws/mvn" "$mvn -o && echo built"
check "$MODE_NAME: a later sandbox builds offline with what an earlier one stored" \
    contains "$OUT" "built"
OUT=$(user_sh "cd '$ws/mvn' && $mvn -o" 2>&1)
check "... while the host's repository does not hold it" contains "$OUT" "e2e:sbxext:jar:1.0"

# --- pre-commit --------------------------------------------------------------------------------
in_sandbox "$ws" 'pre-commit run --all-files'
check "$MODE_NAME: pre-commit runs the hook from the host's environment" contains "$OUT" "hook ran"
# A hook environment the host does not have: pre-commit makes it in the sandbox.
u bash -c "cd '$ws' && sed 's/e2e-hook/e2e-new/; s/hook ran/new hook ran/; s/language: python/language: python\n    additional_dependencies: [e2epip]/' .pre-commit-config.yaml > .pre-commit-new.yaml"
in_sandbox "$ws" 'PIP_NO_INDEX=1 PIP_FIND_LINKS=~/dist pre-commit run --config .pre-commit-new.yaml --all-files'
check "$MODE_NAME: pre-commit makes a new hook environment in the sandbox" \
    contains "$OUT" "new hook ran"
# The attack: a `.pth` in the hook's environment runs with every Python start of it.
in_sandbox "$ws" "for d in $env_dir/lib/python3*/site-packages; do
    echo \"import os; open('$TEST_HOME/PLANTED', 'w')\" > \$d/e2e.pth && cat \$d/e2e.pth; done"
check "$MODE_NAME: the sandbox writes into pre-commit's cache" test "$RC" -eq 0
check "... not into the host's" test -z "$(ls "$env_dir"/lib/python3*/site-packages/e2e.pth 2>/dev/null)"
OUT=$(user_sh "cd '$ws' && git -c user.email=e2e@example.com -c user.name=e2e commit -q -m host 2>&1")
check "host: git commit runs the pre-commit hook" contains "$OUT" "hook ran"
check "... and nothing the sandbox planted" test ! -e "$TEST_HOME/PLANTED"

check "$MODE_NAME: the host's npm cache, ~/.cache (pip's, pre-commit's) and Maven's repository are byte-for-byte unchanged" \
    test "$before" = "$(snapshot .npm .cache .m2)"

finish
