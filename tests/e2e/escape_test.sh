#!/usr/bin/env bash
# The escape suite: as the unprivileged test user, through `caretz exec` in session mode
# ($1 = session) or a fresh sandbox per command ($1 = fresh), every attempt to get out of the
# sandbox must be contained. Each attempt runs a command inside and then checks the host from
# outside (as root). The suite ends with a table: attempt | expected | seen.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sandbox_mode "${1:-}"
SH=/bin/bash

# A home of the test's own, so hidden paths, secrets and "outside" files belong to this run.
own_home
ws="$TEST_HOME/ws"
outside="$TEST_HOME/outside"
u mkdir -p "$ws" "$outside/dir" "$TEST_HOME/.ssh" "$TEST_HOME/.aws" "$TEST_HOME/.gnupg" \
    "$TEST_HOME/.config/caretz" "$ws/.caretz"

tag="e2e$$"
ssh_secret="SSH-PRIVATE-KEY-$tag"
aws_secret="AWS-SECRET-$tag"
gpg_secret="GPG-SECRET-$tag"
config_secret="sk-config-$tag"
env_secrets=("sk-caretz-env-$tag" "sk-openai-env-$tag" "sk-anthropic-env-$tag")
write_as_user() { u tee "$1" >/dev/null; }
echo "$ssh_secret" | write_as_user "$TEST_HOME/.ssh/id_ed25519"
echo "[default]
aws_secret_access_key = $aws_secret" | write_as_user "$TEST_HOME/.aws/credentials"
echo "$gpg_secret" | write_as_user "$TEST_HOME/.gnupg/secring.gpg"
# Caretz's own config must stay valid JSON with known keys, so the "key" rides in a setting.
printf '{"sandbox": {"hidden": ["~/%s"]}}\n' "$config_secret" |
    write_as_user "$TEST_HOME/.config/caretz/config.json"
echo "$config_secret" | write_as_user "$TEST_HOME/.config/caretz/api_key"
u chmod 600 "$TEST_HOME/.ssh/id_ed25519" "$TEST_HOME/.aws/credentials"
echo original | write_as_user "$outside/hostfile"
echo settings | write_as_user "$ws/.caretz/settings"
echo data | write_as_user "$ws/data.txt"
as_user "$SH" "$ws" git init -q .
# A second workspace that is not (yet) a git repository, and a third that is a worktree of a
# repository outside it (its .git is a file naming the real git folder).
ws_plain="$TEST_HOME/plain"
u mkdir -p "$ws_plain"
ws_tree="$TEST_HOME/tree"
u mkdir -p "$TEST_HOME/main-repo"
as_user "$SH" "$TEST_HOME/main-repo" sh -c 'git init -q . && git -c user.name=e2e -c user.email=e2e@x commit -q --allow-empty -m init && git worktree add -q ../tree'
gitfile_before=$(cat "$ws_tree/.git")
# Inside the workspace, a nested clone and a submodule: git runs their hooks on the host too.
as_user "$SH" "$ws" sh -c "git init -q nested && git -c protocol.file.allow=always submodule add -q $TEST_HOME/main-repo sub"
sub_gitfile_before=$(cat "$ws/sub/.git")

cleanup() {
    [[ -n ${sleeper:-} ]] && kill "$sleeper" 2>/dev/null
    [[ -n ${server:-} ]] && kill "$server" 2>/dev/null
    for s in "${created_sockets[@]}"; do rm -f "$s"; done
    [[ -n ${created_dbus_dir:-} ]] && rmdir /run/dbus 2>/dev/null
    end_tmux
    rm -f "/tmp/tmux-$(id -u)/$TMUX_SOCKET"
    rm -rf "$TEST_HOME" "/tmp/caretz-e2e-pwned-$tag" "/tmp/caretz-e2e-control-$tag" \
        "/var/tmp/caretz-e2e-$tag" "/dev/shm/caretz-e2e-$tag" "/tmp/caretz-e2e-udp-$tag" "/etc/caretz-e2e-$tag"
}
created_sockets=()
trap cleanup EXIT

# probe.py: what shell tools cannot do directly, run inside the sandbox (and once on the host).
cat >"$ws/probe.py" <<'EOF'
import ctypes, errno, os, re, socket, sys

def err(e):
    return f"{type(e).__name__}: {os.strerror(e.errno) if getattr(e, 'errno', None) else e}"

def connect(family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(address)
        print("connected:", s.recv(100).decode(errors="replace").strip())
    except OSError as e:
        print("connect failed:", err(e))

def tiocsti(text):
    import fcntl, termios
    targets = [("fd0", 0), ("fd1", 1), ("fd2", 2)]
    try:
        targets.append(("/dev/tty", os.open("/dev/tty", os.O_RDWR)))
    except OSError as e:
        print("/dev/tty:", err(e))
    for name, fd in targets:
        try:
            tty = os.ttyname(fd)
        except OSError:
            tty = "a terminal from outside" if os.isatty(fd) else "not a terminal"
        try:
            for ch in text:
                fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
            print(name, "injected into", tty)
        except OSError as e:
            print(name, f"({tty}) refused:", err(e))

def ptrace(pid):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
        print("ptrace attached")
    else:
        print("ptrace failed:", os.strerror(ctypes.get_errno()))

def handle(target, writable_dir):
    # The "shocker" trick: a file handle for an outside file opened through a writable mount.
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(8 + 128)
    ctypes.c_uint.from_buffer(buf, 0).value = 128
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(-100, target.encode(), buf, ctypes.byref(mount_id), 0) != 0:
        print("name_to_handle_at failed:", os.strerror(ctypes.get_errno()))
        return
    mount_fd = os.open(writable_dir, os.O_RDONLY)
    fd = libc.open_by_handle_at(mount_fd, buf, os.O_RDWR)
    if fd < 0:
        print("open_by_handle_at failed:", os.strerror(ctypes.get_errno()))
    else:
        os.write(fd, b"pwned\n")
        print("open_by_handle_at wrote")

def rw_mounts(allowed):
    bad = []
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        point, options = f[4], f[5].split(",")
        if "rw" in options and not any(point == a or point.startswith(a.rstrip("/") + "/") for a in allowed):
            bad.append(point)
    print("writable mounts outside the writable roots:", " ".join(bad) or "none")

def scan(markers, memory):
    # The markers come reversed, so that no command line or shell holds them as they are.
    markers = [m[::-1] for m in markers]
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for name in ("environ", "cmdline"):
            try:
                data = open(f"/proc/{pid}/{name}", "rb").read()
            except OSError:
                continue
            found |= {m for m in markers if m.encode() in data}
        if not memory or int(pid) == os.getpid():
            continue
        try:
            maps = open(f"/proc/{pid}/maps").read().splitlines()
            mem = open(f"/proc/{pid}/mem", "rb", 0)
        except OSError:
            continue
        for line in maps:
            addr, perms = line.split()[:2]
            if "r" not in perms:
                continue
            start, end = (int(x, 16) for x in addr.split("-"))
            if end - start > 1 << 30:  # sanitizer shadow memory: reserved, not data
                continue
            overlap = max(len(m) for m in markers)
            for at in range(start, end, 1 << 20):
                try:
                    mem.seek(at)
                    data = mem.read(min(end, at + (1 << 20) + overlap) - at)
                except (OSError, OverflowError, ValueError, MemoryError):
                    continue
                found |= {m for m in markers if m.encode() in data}
    print("secrets found:", " ".join(sorted(found)) or "none")

what = sys.argv[1]
if what == "unix":
    connect(socket.AF_UNIX, sys.argv[2])
elif what == "abstract":
    connect(socket.AF_UNIX, "\0" + sys.argv[2])
elif what == "tcp":
    connect(socket.AF_INET, (sys.argv[2], int(sys.argv[3])))
elif what == "tiocsti":
    tiocsti(sys.argv[2])
elif what == "ptrace":
    ptrace(int(sys.argv[2]))
elif what == "handle":
    handle(sys.argv[2], sys.argv[3])
elif what == "rw-mounts":
    rw_mounts(sys.argv[2:])
elif what == "scan":
    scan(sys.argv[3:], sys.argv[2] == "memory")
elif what == "rename":
    try:
        os.rename(sys.argv[2], sys.argv[3])
        print("rename succeeded")
    except OSError as e:
        print("rename failed:", err(e))
elif what == "xattr":
    try:
        os.setxattr(sys.argv[2], "user.caretz", b"pwned")
        print("setxattr succeeded")
    except OSError as e:
        print("setxattr failed:", err(e))
EOF
chown "$E2E_USER:" "$ws/probe.py"

# ---------------------------------------------------------------------------------------------
ROWS=()
inside() { caretz_as_user "$SH" "${INSIDE_DIR:-$ws}" exec "${MODE[@]}" "$1"; }

# The host as the sandbox must leave it: the test home outside the workspaces, each entry with
# its type, mode, size, mtime, links, inode and (for files) a hash of its contents.
# Caretz's own state folder (audit log, transcripts) is written by Caretz on the host, not by
# the sandbox, so it is left out.
fingerprint() {
    local state="$TEST_HOME/.local/state"
    find "$TEST_HOME" \( -path "$ws" -o -path "$ws_plain" -o -path "$ws_tree" -o -path "$state" \) -prune -o \
        -printf '%p %y %m %s %T@ %n %i\n' 2>/dev/null | sort
    find "$TEST_HOME" \( -path "$ws" -o -path "$ws_plain" -o -path "$ws_tree" -o -path "$state" \) -prune -o -type f -print0 |
        sort -z | xargs -0 md5sum 2>/dev/null
}
# What must stay as it is inside the workspace: .git/hooks, .git/config and .caretz.
protected_fingerprint() {
    {
        stat -c '%n %i' "$ws/.git" 2>/dev/null  # its mtime moves with git's lock files
        for d in "$ws/.git/hooks" "$ws/.git/config" "$ws/.caretz"; do
            stat -c '%n %i %a %s %Y' "$d" 2>/dev/null
        done
        find "$ws/.git/hooks" "$ws/.caretz" -printf '%p %m %s %T@\n' 2>/dev/null | sort
        cat "$ws/.git/config" "$ws/.caretz/settings" 2>/dev/null
    } | md5sum
}
# Caretz creates its state folder on its first start, before any sandbox runs.
u mkdir -p "$TEST_HOME/.local/state/caretz"
baseline=$(fingerprint)
protected_baseline=$(protected_fingerprint)

host_unchanged() { [[ $(fingerprint) == "$baseline" ]]; }
protected_unchanged() { [[ $(protected_fingerprint) == "$protected_baseline" ]]; }
# No hook other than git's samples anywhere in a workspace, and no hooksPath/fsmonitor in
# any of its git configs.
no_hooks_in() {
    [[ -z $(find "$1" -path '*hooks/*' -type f ! -name '*.sample' 2>/dev/null) ]] &&
        ! grep -rqs --include=config -e hooksPath -e fsmonitor "$1"
}
out_lacks() {
    local s
    for s in "$@"; do [[ $OUT != *"$s"* ]] || return 1; done
}

# What the user would see, on one line: the first line that is not Caretz's own notice, with
# the test's paths shortened.
seen_text() {
    local line
    line=$(printf '%s\n' "$OUT" | tr -d '\r' | grep -v '^caretz: ' | grep -v '^[[:space:]]*$' | head -1)
    line=${line//"$ws_plain"/WS2}
    line=${line//"$ws_tree"/WS3}
    line=${line//"$ws"/WS}
    line=${line//"$TEST_HOME"/\~}
    line=$(sed -E 's/^(\/bin\/)?bash: (line [0-9]+: )?//' <<<"$line")
    [[ -z $line ]] && line="(no output, exit $RC)"
    printf '%s' "${line:0:72}"
}

# attempt NAME EXPECTED COMMAND CHECK...: runs COMMAND inside; it is contained when CHECK
# (run on the host afterwards) succeeds.
attempt() {
    local name=$1 expected=$2 command=$3
    shift 3
    inside "$command"
    local seen
    seen=$(seen_text)
    if "$@"; then
        pass "$name"
        ROWS+=("$name|$expected|$seen")
    else
        fail "$name" "not contained; output: $(printf '%s' "$OUT" | head -5)"
        ROWS+=("$name|$expected|NOT CONTAINED: $seen")
    fi
}

print_table() {
    echo
    echo "Escape suite ($MODE_NAME mode): attempt | expected | seen"
    printf '%s\n' "${ROWS[@]}" | awk -F'|' '
        { a[NR] = $1; e[NR] = $2; s[NR] = $3; if (length($1) > w1) w1 = length($1); if (length($2) > w2) w2 = length($2) }
        END { for (i = 1; i <= NR; i++) printf "%-*s | %-*s | %s\n", w1, a[i], w2, e[i], s[i] }'
    echo
}

# --- writes outside the writable roots ---------------------------------------------------------
attempt "write by redirect" "EROFS, host unchanged" \
    'echo pwned > ~/outside/new' host_unchanged
attempt "append to an outside file" "EROFS, host unchanged" \
    'echo pwned >> ~/outside/hostfile' host_unchanged
attempt "write through ../ from the workspace" "EROFS, host unchanged" \
    'echo pwned > ../outside/new' host_unchanged
attempt "rename out of the workspace (mv)" "EXDEV then EROFS; file stays" \
    'mv data.txt ~/outside/' eval 'host_unchanged && [[ -f $ws/data.txt ]]'
attempt "rename out with rename(2)" "EXDEV, host unchanged" \
    "python3 probe.py rename data.txt $outside/data.txt" \
    eval 'host_unchanged && [[ -f $ws/data.txt ]]'
attempt "rename the workspace itself" "EBUSY/EROFS" \
    "mv $ws $ws.moved" eval 'host_unchanged && [[ -d $ws && ! -e $ws.moved ]]'
attempt "hard link an outside file into the workspace" "EXDEV, no link" \
    'ln ~/outside/hostfile hl && echo pwned >> hl' \
    eval 'host_unchanged && [[ ! -e $ws/hl ]]'
attempt "hard link a workspace file out" "EXDEV/EROFS" \
    'ln data.txt ~/outside/hl' host_unchanged
attempt "symlink in the workspace pointing out, write through it" "EROFS" \
    'ln -s ~/outside out && echo pwned > out/new; ln -s ~/outside/hostfile sl && echo pwned >> sl' \
    host_unchanged
attempt "mkdir outside" "EROFS" 'mkdir ~/outside/newdir ~/newdir' host_unchanged
attempt "rmdir / unlink outside" "EROFS" 'rmdir ~/outside/dir; rm -f ~/outside/hostfile' host_unchanged
attempt "truncate an outside file" "EROFS" 'truncate -s 0 ~/outside/hostfile' host_unchanged
attempt "chmod an outside file" "EROFS" 'chmod 777 ~/outside/hostfile' host_unchanged
attempt "utimes (touch -d) an outside file" "EROFS" "touch -d '2001-01-01' ~/outside/hostfile" host_unchanged
attempt "setxattr on an outside file" "EROFS" 'python3 probe.py xattr ~/outside/hostfile' host_unchanged
attempt "world-writable host dirs (/var/tmp, /dev/shm)" "EROFS / private" \
    "touch /var/tmp/caretz-e2e-$tag /dev/shm/caretz-e2e-$tag; ls /var/tmp/caretz-e2e-$tag" \
    eval "[[ ! -e /var/tmp/caretz-e2e-$tag && ! -e /dev/shm/caretz-e2e-$tag ]]"
attempt "mount --bind over an outside dir" "EPERM" \
    'mount --bind . ~/outside && echo pwned > ~/outside/new' host_unchanged
attempt "remount an outside dir read-write" "EPERM" \
    'mount -o remount,rw ~/outside && echo pwned > ~/outside/new' host_unchanged
attempt "unshare -rm, then remount rw" "user namespaces disabled" \
    'unshare -rm sh -c "mount -o remount,bind,rw ~/outside; mount -o remount,rw /; echo pwned > ~/outside/new"' \
    host_unchanged
attempt "file handle via a writable mount (open_by_handle_at)" "EPERM" \
    "python3 probe.py handle $outside/hostfile $ws" host_unchanged
INSIDE_DIR=$ws attempt "no writable mount besides workspace, /tmp, /.caretz, /dev, /proc" "none" \
    "python3 probe.py rw-mounts $ws /tmp /.caretz /dev /proc" eval '[[ $OUT == *"roots: none"* ]]'

# --- protected paths inside the workspace ----------------------------------------------------
attempt "write .git/hooks/pre-commit" "EROFS" \
    'echo "touch /tmp/pwned" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit' \
    eval 'protected_unchanged && no_hooks_in $ws'
attempt "append to .git/config" "EROFS" \
    'printf "[core]\n\thooksPath = /tmp\n" >> .git/config; git config core.fsmonitor "touch /tmp/pwned"' \
    eval 'protected_unchanged && no_hooks_in $ws'
attempt "write .caretz" "EROFS" \
    'echo pwned > .caretz/settings; echo pwned > .caretz/new' protected_unchanged
attempt "remove or rename .git/hooks, .git/config, .caretz" "EBUSY" \
    'rm -rf .git/hooks; mv .git/config .git/config.old; mv .caretz .caretz.old; rm -rf .caretz' \
    eval 'protected_unchanged && no_hooks_in $ws'
attempt "rename .git away, write a new .git/hooks" "EBUSY (.git held in place)" \
    'mv .git .git.old && mkdir -p .git/hooks && echo "touch /tmp/pwned" > .git/hooks/pre-commit && cp .git.old/config .git/config && echo "[core]" >> .git/config' \
    eval 'protected_unchanged && no_hooks_in $ws'
attempt "write the hooks and config of a nested clone" "EROFS" \
    'echo "touch /tmp/pwned" > nested/.git/hooks/pre-commit; git -C nested config core.hooksPath /tmp' \
    eval 'no_hooks_in $ws'
attempt "write a submodule's hooks and config" "EROFS" \
    'echo "touch /tmp/pwned" > .git/modules/sub/hooks/post-checkout; git -C sub config core.fsmonitor "touch /tmp/pwned"' \
    eval 'no_hooks_in $ws'
attempt "point a submodule's .git file at a new git folder" "EROFS" \
    'mkdir -p /tmp/evil/hooks && echo "gitdir: /tmp/evil" > sub/.git; mv sub sub.old' \
    eval '[[ $(cat $ws/sub/.git) == "$sub_gitfile_before" ]]'
# Put the real .git back if the attempt above got through, so later checks stay meaningful.
if [[ -d $ws/.git.old ]]; then rm -rf "$ws/.git" && mv "$ws/.git.old" "$ws/.git"; fi
# No mount point is made on the host for a workspace without a repository (an empty .git there
# breaks go build), so git init succeeds; the check after the command moves the hook aside, and
# the host's own git commit there runs nothing.
host_commit_runs_nothing() {
    rm -f "$E2E_HOME/pwned-by-hook"
    as_user "$SH" "$1" git -c user.name=e2e -c user.email=e2e@example.invalid \
        commit -q --allow-empty -m host </dev/null >/dev/null 2>&1
    [[ ! -e $E2E_HOME/pwned-by-hook && ! -e $1/.git/hooks/pre-commit ]]
}
INSIDE_DIR=$ws_plain attempt "git init in a workspace without .git, write a hook" \
    "made; hook moved aside after the command" \
    "git init -q . && printf '#!/bin/sh\ntouch $E2E_HOME/pwned-by-hook\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit" \
    host_commit_runs_nothing "$ws_plain"
INSIDE_DIR=$ws_tree attempt "point a worktree's .git file at a git folder with hooks" "EROFS" \
    'mkdir -p evil/hooks && cp -r ../main-repo/.git/. evil/ 2>/dev/null; echo "touch /tmp/pwned" > evil/hooks/pre-commit; printf "gitdir: %s/evil\n" "$PWD" > .git' \
    eval '[[ $(cat $ws_tree/.git) == "$gitfile_before" ]]'

# --- hidden files ------------------------------------------------------------------------------
secrets=("$ssh_secret" "$aws_secret" "$gpg_secret" "$config_secret")
attempt "read ~/.ssh/id_ed25519" "ENOENT" 'cat ~/.ssh/id_ed25519' out_lacks "${secrets[@]}"
attempt "read ~/.aws/credentials" "ENOENT" 'cat ~/.aws/credentials' out_lacks "${secrets[@]}"
attempt "read ~/.gnupg" "ENOENT" 'cat ~/.gnupg/secring.gpg' out_lacks "${secrets[@]}"
attempt "read Caretz's config and key (~/.config/caretz)" "ENOENT" \
    'cat ~/.config/caretz/config.json ~/.config/caretz/api_key' out_lacks "${secrets[@]}"
attempt "hidden files through a workspace symlink" "ENOENT" \
    'ln -s ~/.ssh s && cat s/id_ed25519; ln -s ~/.config/caretz c && cat c/*' out_lacks "${secrets[@]}"
attempt "hidden files through /proc/1/root and /proc/self/root" "ENOENT" \
    "cat /proc/1/root$TEST_HOME/.ssh/id_ed25519 /proc/self/root$TEST_HOME/.aws/credentials" \
    out_lacks "${secrets[@]}"
attempt "search the home for the secrets" "nothing found" \
    "grep -rs -e $tag ~ /proc/1/root$TEST_HOME --exclude-dir=ws >/tmp/found; echo \"files holding a secret: \$(wc -l </tmp/found)\"; cat /tmp/found" \
    out_lacks "${secrets[@]}"

# --- API keys ----------------------------------------------------------------------------------
E2E_ENV=(CARETZ_API_KEY="${env_secrets[0]}" OPENAI_API_KEY="${env_secrets[1]}"
    ANTHROPIC_API_KEY="${env_secrets[2]}")
reversed_secrets=$(printf '%s\n' "${env_secrets[@]}" | rev | tr '\n' ' ')
attempt "API keys in the environment" "absent" \
    'env >/tmp/env; set >>/tmp/env; grep -E "API_KE[Y]|s[k]-" /tmp/env || echo "no API key in $(wc -l </tmp/env) lines of env and set"; cat /tmp/env' \
    out_lacks "${env_secrets[@]}"
attempt "API keys in /proc/*/environ and cmdline" "absent" \
    "python3 probe.py scan files $reversed_secrets; cat /proc/*/environ /proc/*/cmdline | tr '\\0' '\\n'" \
    eval 'out_lacks "${env_secrets[@]}" && [[ $OUT == *"secrets found: none"* ]]'
attempt "API keys in the memory of any visible process" "absent" \
    "python3 probe.py scan memory $reversed_secrets" \
    eval '[[ $OUT == *"secrets found: none"* ]]'
E2E_ENV=()

# --- processes -----------------------------------------------------------------------------------
as_user "$SH" "$ws" sleep "987653.$$" </dev/null >/dev/null 2>&1 &
sleeper=
for _ in $(seq 100); do
    sleeper=$(pgrep -u "$E2E_USER" -fx "sleep 987653.$$" | head -1)
    [[ -n $sleeper ]] && break
    sleep 0.1
done
check "control: a host process of the user's runs" test -n "$sleeper"
alive() { kill -0 "$sleeper" 2>/dev/null; }
attempt "kill -0 a host process" "ESRCH" "kill -0 $sleeper || echo 'kill: no such process'" \
    eval '[[ $OUT == *"o such process"* ]] && alive'
attempt "SIGKILL a host process, and kill -9 -1" "ESRCH; host process lives" \
    "kill -9 $sleeper; kill -9 -1" alive
attempt "/proc/<host pid> invisible" "ENOENT" "ls /proc/$sleeper/ && cat /proc/$sleeper/environ" \
    eval '[[ $OUT == *"No such file"* ]]'
attempt "ptrace a host process" "ESRCH" "python3 probe.py ptrace $sleeper" \
    eval '[[ $OUT == *"ptrace failed"* ]] && alive'
attempt "strace -p a host process" "fails" "strace -p $sleeper -e trace=none" \
    eval '[[ $RC -ne 0 ]] && alive'
attempt "/proc/1 is the sandbox's own init" "not the host's init" \
    'cat /proc/1/cmdline | tr "\0" " "; echo; ls /proc/1/root/' \
    eval '[[ $OUT == *bwrap* && $OUT != *systemd* ]]'
attempt "write via /proc/1/root" "EROFS" "echo pwned > /proc/1/root$outside/new" host_unchanged

# --- setuid binaries -----------------------------------------------------------------------------
# (inside the user namespace root's files belong to "nobody"; sudo says so first)
attempt "sudo -n" "no new privileges" 'sudo -n true 2>&1 | grep -v "is owned by uid"; exit ${PIPESTATUS[0]}' \
    eval '[[ $OUT == *"no new privileges"* && $RC -ne 0 ]]'
attempt "sudo -S with the user's real password" "no new privileges" \
    "echo '$E2E_PASSWORD' | sudo -S -p '' sh -c 'id -u; touch /etc/caretz-e2e-$tag' 2>&1 | grep -v 'is owned by uid'" \
    eval "[[ ! -e /etc/caretz-e2e-$tag && \$OUT != *\$'\\n0'* && \$OUT != 0* ]]"
# Other test runs' fixtures may set the test user's password again meanwhile (a new salt), so
# the check is: every other account is untouched and the test user's password is still the same.
other_accounts() { grep -v "^$E2E_USER:" /etc/shadow | md5sum; }
same_password() {
    python3 -W ignore -c 'import crypt, sys
h = [l.split(":")[1] for l in open("/etc/shadow") if l.startswith(sys.argv[1] + ":")][0]
sys.exit(crypt.crypt(sys.argv[2], h) != h)' "$E2E_USER" "$E2E_PASSWORD"
}
accounts_before=$(other_accounts)
attempt "su and passwd" "fail" \
    "echo '$E2E_PASSWORD' | su -c 'touch /etc/caretz-e2e-$tag' root; printf '%s\n' '$E2E_PASSWORD' 'Other-Pass-1' 'Other-Pass-1' | passwd" \
    eval "[[ ! -e /etc/caretz-e2e-$tag && \$(other_accounts) == '$accounts_before' ]] && same_password"
attempt "mount (setuid)" "fails" "mount -t tmpfs none $outside/dir && echo pwned > $outside/dir/x" host_unchanged

# --- sockets -------------------------------------------------------------------------------------
# Fake daemons on the host: the Docker socket, the system bus and an abstract socket, each
# answering any client with a marker line, and a TCP server on every address.
if [[ ! -d /run/dbus ]]; then mkdir /run/dbus && created_dbus_dir=1; fi
fake_sockets=()
for s in /run/docker.sock /run/dbus/system_bus_socket; do
    # Another test run (another build tree) may have its own fake there: leave it alone.
    if [[ -e $s ]]; then echo "note: $s exists already; the attempt uses it as it is"; else fake_sockets+=("$s"); fi
done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
abstract="caretz-e2e-abstract-$tag"
udp_log="/tmp/caretz-e2e-udp-$tag"
: >"$udp_log"
python3 - "$port" "$abstract" "$udp_log" "${fake_sockets[@]}" >/dev/null 2>&1 <<'EOF' &
import os, selectors, socket, sys
port, abstract, udp_log, paths = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
sel = selectors.DefaultSelector()
def listen(s, address, marker):
    s.bind(address); s.listen(); sel.register(s, selectors.EVENT_READ, marker)
for p in paths:
    if os.path.exists(p):
        continue
    listen(socket.socket(socket.AF_UNIX), p, b"HOST-SOCKET-REACHED " + p.encode())
    os.chmod(p, 0o666)
listen(socket.socket(socket.AF_UNIX), "\0" + abstract, b"HOST-SOCKET-REACHED abstract")
listen(socket.socket(socket.AF_INET), ("0.0.0.0", port), b"HOST-TCP-REACHED")
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("0.0.0.0", port))
sel.register(udp, selectors.EVENT_READ, None)
while True:
    for key, _ in sel.select():
        if key.data is None:
            data, peer = udp.recvfrom(100)
            open(udp_log, "a").write(f"UDP from {peer}\n")
            continue
        c, _ = key.fileobj.accept()
        c.sendall(key.data + b"\n"); c.close()
EOF
server=$!
for s in "${fake_sockets[@]}"; do
    for _ in $(seq 50); do [[ -S $s ]] && break; sleep 0.1; done
    created_sockets+=("$s")
done
for _ in $(seq 50); do grep -qi ":$(printf '%04X' "$port") " /proc/net/tcp 2>/dev/null && break; sleep 0.1; done
host_ip=$(hostname -I | awk '{print $1}')
# Positive control: from the host the fake daemons answer.
control=$(as_user "$SH" "$ws" python3 probe.py unix /run/docker.sock; as_user "$SH" "$ws" python3 probe.py abstract "$abstract"
    as_user "$SH" "$ws" python3 probe.py tcp 127.0.0.1 "$port")
check "control: the fake daemons answer on the host" eval '[[ $(grep -c REACHED <<<"$control") -ge 2 ]]'
unreached() { [[ $OUT != *REACHED* && $OUT != *"connected:"* ]]; }
attempt "Docker socket (/var/run, /run, /proc/1/root)" "ENOENT" \
    'for p in /var/run/docker.sock /run/docker.sock /proc/1/root/run/docker.sock /proc/self/root/var/run/docker.sock; do python3 probe.py unix $p; done' unreached
attempt "system bus (/run/dbus, /var/run/dbus)" "ENOENT" \
    'for p in /run/dbus/system_bus_socket /var/run/dbus/system_bus_socket /proc/1/root/run/dbus/system_bus_socket; do python3 probe.py unix $p; done; dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames' \
    unreached
attempt "abstract UNIX socket of a host process" "ECONNREFUSED (own netns)" \
    "python3 probe.py abstract $abstract" unreached
attempt "TCP to 127.0.0.1 (curl, python, /dev/tcp)" "no network" \
    "curl -sS -m 3 http://127.0.0.1:$port/; python3 probe.py tcp 127.0.0.1 $port; (exec 3<>/dev/tcp/127.0.0.1/$port && head -1 <&3)" \
    unreached
attempt "TCP to the host's own address ($host_ip)" "no network" \
    "python3 probe.py tcp $host_ip $port; curl -sS -m 3 http://$host_ip:$port/" unreached
attempt "UDP to the host, ping" "nothing arrives" \
    "for a in $host_ip 127.0.0.1; do python3 -c 'import socket, sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (sys.argv[1], $port)); print(\"sent to\", sys.argv[1], \"(the sandbox loopback)\")' \$a 2>&1 | tail -1; done; ping -c1 -W1 $host_ip" \
    eval 'sleep 0.5; [[ ! -s $udp_log && $OUT != *" 0% packet loss"* ]]'
kill "$server" 2>/dev/null
server=

# --- TIOCSTI into the real terminal ----------------------------------------------------------------
# A real terminal: a host shell as the test user in a tmux pane. Text injected into it would be
# run by that shell on the host, outside the sandbox.
pwned="/tmp/caretz-e2e-pwned-$tag"
control_file="/tmp/caretz-e2e-control-$tag"
TMUX_SOCKET="caretz-e2e-escape-$tag"
tmux_ new-session -d -s main -x 150 -y 40 \
    "runuser -u $E2E_USER -- env -i HOME=$TEST_HOME USER=$E2E_USER PATH=/usr/bin:/bin SHELL=/bin/bash LANG=C.UTF-8 TERM=screen-256color HISTFILE=/dev/null bash --norc --noprofile -i"
tmux_ send-keys -t main "cd $ws; PS1='host\$ '" Enter
wait_for_screen 'host$' 15
# Control: the same injection from the host shell itself does reach the terminal.
tmux_ send-keys -t main "python3 probe.py tiocsti 'touch $control_file'\$'\\n'" Enter
sleep 1.5
if [[ -e $control_file ]]; then control_note="control injected on the host"; else control_note="kernel refuses TIOCSTI (control failed)"; fi
tmux_ send-keys -t main "clear" Enter
sleep 0.5
tmux_ clear-history -t main
tmux_ send-keys -t main "$E2E_BIN exec ${MODE[*]} \"python3 probe.py tiocsti 'touch $pwned'\$'\\n'\"; echo caretz-done-\$?" Enter
wait_for_screen "caretz-done-" 20
sleep 1
tmux_ send-keys -t main "echo pane-alive" Enter
wait_for_screen "pane-alive" 5
tiocsti_seen=$(screen_text | grep -E '^(fd[0-2]|/dev/tty)' | tr '\n' ';' | sed 's/;$//')
OUT=$(screen_text)
if [[ ! -e $pwned ]]; then
    pass "TIOCSTI injection into the real terminal"
    ROWS+=("TIOCSTI into the terminal (tmux)|nothing reaches the host shell|$tiocsti_seen [$control_note]")
else
    fail "TIOCSTI injection into the real terminal" "the host shell ran the injected text: $OUT"
    ROWS+=("TIOCSTI into the terminal (tmux)|nothing reaches the host shell|NOT CONTAINED: $tiocsti_seen")
fi
end_tmux

# Into the sandbox's own terminal: in session mode text pushed there would be read by the
# session shell once the command ends, a line Caretz never sent. `read` shows what arrived.
attempt "TIOCSTI into the sandbox's own terminal" "EPERM, nothing typed" \
    "python3 probe.py tiocsti 'echo typed-$tag'; read -r -t 1 line </dev/tty; echo \"read:[\$line]\"" \
    eval '[[ $OUT != *"injected into"* && $OUT != *"read:[echo"* ]]'

if host_unchanged; then
    pass "the host is unchanged after every attempt"
else
    fail "the host is unchanged after every attempt" "$(diff <(echo "$baseline") <(fingerprint))"
fi
print_table
finish
