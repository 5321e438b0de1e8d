#!/usr/bin/env python3
"""Re-captures the outputs stored in cases/*.txt by running each case's command for real.

Run as root on a Linux machine with bubblewrap and an unprivileged user `cztest`, naming the
Caretz binary built from this tree:

    python3 tests/unit/escalation/capture_cases.py --caretz build/app/caretz \
        tests/unit/escalation/cases/*.txt

For every case whose `capture:` is not `none`, the command runs as cztest in the way the case
names, and the case's `exit:`, `sudo-run:` lines and output block are rewritten with what really
happened. Host facts and expectations are written by hand and left alone. The unit tests only
read the files; they never run these tools.

Every capture (unless the case says `sudo-watch: no`) runs with Caretz's real stand-in for sudo
in place, as Caretz sets it up inside its sandbox (sandbox/run_watch.h): in a private mount
namespace whose root holds /.caretz, the Caretz binary is bound over each sudo of the host, the
real sudo at /.caretz/real/sudo/PATH, and a records file at /.caretz/runs. What the
stand-in records there becomes the case's `sudo-run: CWD | ARGV` lines.

Ways of capturing (the `capture:` value, default `sandbox`):
  sandbox               bwrap like Caretz's policy: the host read-only, ~/work writable,
                        ~/work/.git/config and .git/hooks read-only binds, private /tmp, /run and
                        ~/.ssh, ~/.gnupg, ~/.aws and the case's `hidden:` folders replaced by
                        empty read-only tmpfs (so what was there is missing),
                        all namespaces unshared.
  sandbox docker-denied the same plus a root-only socket bound at /run/docker.sock
  sandbox docker-stale  the same plus a socket nobody listens on at /run/docker.sock
  sandbox uid0          the same, but root inside the user namespace (bwrap --uid 0)
  userns                `unshare -U` without bwrap: a user namespace without no-new-privileges
  nosuid                a setuid-root copy of sudo on a nosuid tmpfs, no namespaces
  host                  no sandbox at all (for messages the sandbox never causes)
  caretz                Caretz's own sandbox: `caretz exec --no-session --json COMMAND` run as
                        cztest in the case's cwd, which becomes the workspace, with the --caretz
                        binary (its caretz-inside beside it, as built or installed); the output
                        and exit status come from the JSON. Caretz's stand-in watches sudo
                        there, so no `sudo-run:` lines are recorded
  none                  not captured here; `source:` says where the text comes from
"""

import argparse
import json
import os
import pty
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile

USER = "cztest"
HOME = "/home/cztest"
WORK = HOME + "/work"
SCRATCH = "/tmp/caretz-capture"
ENV = {
    "HOME": HOME,
    "USER": USER,
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TERM": "xterm-256color",
}


def prepare_user_files():
    script = f"""
        set -e
        mkdir -p {WORK} {HOME}/.ssh && chmod 700 {HOME}/.ssh && touch {HOME}/.ssh/id_ed25519
        printf 'Host git.example.com\n  IdentityFile ~/.ssh/id_ed25519\n' > {HOME}/.ssh/config
        mkdir -p {HOME}/.gnupg {HOME}/.aws {HOME}/.kube {HOME}/.local
        chmod 700 {HOME}/.gnupg && touch {HOME}/.gnupg/pubring.kbx
        printf '[default]\naws_access_key_id = AKIAEXAMPLE\n' > {HOME}/.aws/credentials
        printf 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n' > {HOME}/.kube/config
        cd {WORK}
        [ -d .git ] || git init -q .
        echo hi > README
        printf 'services:\\n  web:\\n    image: nginx\\n' > compose.yml
        printf 'all:\\n\\techo built > /etc/built\\n' > Makefile
        printf '#!/bin/sh\nsudo -n true\nsudo -n true\necho deploy finished\n' > deploy.sh
        printf '#!/bin/sh\nsudo -n systemctl restart nginx\necho restarted\n' > restart.sh
        cat > pretend.sh <<'SH'
#!/bin/sh
echo 'sudo: The "no new privileges" flag is set, which prevents sudo from running as root.'
SH
        printf '#!/bin/sh\ntar -xf bundle.tar -C "$HOME/outside"\n' > unpack.sh
        printf 'install:\n\tsudo -n install -m 755 tool.sh /usr/local/bin/tool\n' > deploy.mk
        printf 'install:\n\tinstall -D -m 755 tool.sh $(HOME)/.local/bin/tool\n' > install.mk
        printf 'PREFIX ?= /usr/local\ninstall:\n\tinstall -D -m 755 tool.sh $(PREFIX)/bin/tool\n' > prefix.mk
        mkdir -p pypkg && printf 'from setuptools import setup\nsetup(name="pypkg", version="1.0", py_modules=[])\n' > pypkg/setup.py
        echo 'echo tool' > tool.sh
        mkdir -p leftpad && printf '{{"name":"leftpad-local","version":"1.0.0"}}\n' > leftpad/package.json
        chmod +x deploy.sh restart.sh pretend.sh unpack.sh tool.sh
        rm -rf bundle-src && mkdir -p bundle-src/sub && echo 'echo tool' > bundle-src/tool.sh
        echo a > bundle-src/sub/a && tar -cf bundle.tar -C bundle-src tool.sh sub && rm -rf bundle-src
        mkdir -p {HOME}/outside/repo && printf 'all:\n\ttouch stamp\n' > {HOME}/outside/Makefile
        [ -d {HOME}/outside/repo/.git ] || git init -q {HOME}/outside/repo
        git -C {HOME}/outside/repo -c user.email=a@b -c user.name=c commit -qm init --allow-empty
        git -c user.email=a@b -c user.name=c add -A
        git -c user.email=a@b -c user.name=c commit -qm capture --allow-empty
    """
    subprocess.run(["runuser", "-u", USER, "--", "bash", "-c", script], check=True)


def prepare_sockets():
    os.makedirs(SCRATCH, exist_ok=True)
    for name, mode in (("denied.sock", 0o600), ("stale.sock", 0o666)):
        path = os.path.join(SCRATCH, name)
        if os.path.exists(path):
            os.unlink(path)
        s = socket.socket(socket.AF_UNIX)
        s.bind(path)
        os.chmod(path, mode)


def bwrap_argv(variant, cwd, hidden=()):
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--tmpfs", "/run"]
    # The stand-in's records file stays writable, as Caretz binds it (there when sudo is watched).
    argv += ["--bind-try", STAND_IN_RECORDS, STAND_IN_RECORDS]
    if variant == "docker-denied":
        argv += ["--ro-bind", SCRATCH + "/denied.sock", "/run/docker.sock"]
    if variant == "docker-stale":
        argv += ["--ro-bind", SCRATCH + "/stale.sock", "/run/docker.sock"]
    argv += ["--remount-ro", "/run"]
    for folder in (HOME + "/.ssh", HOME + "/.gnupg", HOME + "/.aws", *hidden):
        argv += ["--tmpfs", folder, "--remount-ro", folder]
    argv += ["--bind", WORK, WORK,
             "--ro-bind", WORK + "/.git/config", WORK + "/.git/config",
             "--ro-bind", WORK + "/.git/hooks", WORK + "/.git/hooks",
             "--unshare-all", "--new-session", "--die-with-parent", "--chdir", cwd]
    if variant == "uid0":
        argv += ["--uid", "0", "--gid", "0"]
    return argv + ["--"]


def nosuid_sudo():
    """A setuid-root sudo on a nosuid mount, so the kernel ignores the setuid bit. The case's
    command runs it by its path, SCRATCH/nosuid/sudo."""
    mount = os.path.join(SCRATCH, "nosuid")
    os.makedirs(mount, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "nosuid", "tmpfs", mount], check=True)
    shutil.copy2("/usr/bin/sudo", mount + "/sudo")
    os.chmod(mount + "/sudo", 0o4755)
    return mount


# Caretz's stand-in for sudo (sandbox/program_run.h, sandbox/stand_in.h).
SUDO_LOCATIONS = ("/usr/bin/sudo", "/bin/sudo", "/usr/sbin/sudo", "/sbin/sudo",
                  "/usr/local/bin/sudo", "/usr/local/sbin/sudo")
STAND_IN_RECORDS = "/.caretz/runs"
REAL_SUDO_DIR = "/.caretz/real/sudo"
RECORDS = SCRATCH + "/sudo-records"
STAND_IN = SCRATCH + "/caretz"
NEW_ROOT = SCRATCH + "/root"


def prepare_stand_in(caretz):
    """Puts the Caretz binary where cztest can run it, and an empty records file of cztest's."""
    os.makedirs(NEW_ROOT, exist_ok=True)
    os.chmod(SCRATCH, 0o755)
    shutil.copy2(caretz, STAND_IN)
    os.chmod(STAND_IN, 0o755)


def reset_records():
    with open(RECORDS, "w"):
        pass
    shutil.chown(RECORDS, USER, USER)
    os.chmod(RECORDS, 0o600)


def with_stand_in(argv):
    """argv run by root in a private mount namespace whose root is the host's with /.caretz
    added and the stand-in bound over every sudo, the way Caretz's sandbox has them; the root is
    switched with pivot_root, as bwrap cannot make a user namespace inside a chroot."""
    binds = []
    seen = set()
    for location in SUDO_LOCATIONS:
        real = os.path.realpath(location)
        if not os.path.isfile(real) or real in seen:
            continue
        seen.add(real)
        binds.append(f'mkdir -p "$R{REAL_SUDO_DIR}{os.path.dirname(real)}"; '
                     f'touch "$R{REAL_SUDO_DIR}{real}"; '
                     f'mount --bind "{real}" "$R{REAL_SUDO_DIR}{real}"; '
                     f'mount --bind "{STAND_IN}" "$R{real}"')
    script = f"""
        set -e
        R={NEW_ROOT}
        mount -t tmpfs -o mode=755 caretz-capture-root "$R"
        for e in /* /.[!.]*; do
            [ -e "$e" ] || [ -L "$e" ] || continue
            n=${{e#/}}
            if [ -L "$e" ]; then ln -s "$(readlink "$e")" "$R/$n"
            elif [ -d "$e" ]; then mkdir "$R/$n"; mount --rbind "$e" "$R/$n"
            else touch "$R/$n"; mount --bind "$e" "$R/$n"; fi
        done
        mkdir -p "$R/.caretz"
        touch "$R{STAND_IN_RECORDS}"
        mount --bind {RECORDS} "$R{STAND_IN_RECORDS}"
        {"; ".join(binds)}
        mkdir "$R/.caretz-old-root"
        cd "$R"
        pivot_root . .caretz-old-root
        umount -l /.caretz-old-root
        cd /
        exec "$@"
    """
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"] + argv


def read_records():
    """The stand-in's records of sudo (sandbox/program_run.cpp's format), as "CWD | ARGV" lines."""
    with open(RECORDS, "rb") as f:
        data = f.read().decode("utf-8", "replace")
    lines = []
    pos = 0

    def field():
        nonlocal pos
        colon = data.index(":", pos)
        length = int(data[pos:colon])
        value = data[colon + 1:colon + 1 + length]
        pos = colon + 1 + length
        return value

    while pos < len(data):
        if not data.startswith("run ", pos):
            raise ValueError(f"not a record of the stand-in: {data[pos:pos + 60]!r}")
        pos += len("run ")
        program = field()
        if data[pos] != ",":
            raise ValueError("a record of the stand-in without a folder")
        pos += 1
        cwd = field()
        argv = []
        while data[pos] == ",":
            pos += 1
            argv.append(field())
        if data[pos] != "\n":
            raise ValueError("a record of the stand-in that does not end its line")
        pos += 1
        if program != "sudo":
            continue
        if any(not a or any(c.isspace() for c in a) for a in argv):
            raise ValueError(f"an argument the sudo-run: line cannot hold: {argv!r}")
        lines.append(f"{cwd} | {' '.join(argv)}")
    return lines


CARETZ = None  # the --caretz binary as given, for `capture: caretz`


def command_argv(case):
    how = case.get("capture", "sandbox").split()
    shell = case.get("shell", "bash")
    cwd = case.get("cwd", WORK)
    env = dict(ENV)
    for assignment in case.get("env", "").split():
        name, _, value = assignment.partition("=")
        env[name] = value
    prefix = ["runuser", "-u", USER, "--", "env", "-i"] + [f"{k}={v}" for k, v in env.items()]
    script = case["command"]
    if how[0] == "sandbox":
        variant = how[1] if len(how) > 1 else ""
        hidden = [h.replace("~", HOME, 1) for h in case.get("hidden", "").split()]
        return prefix + bwrap_argv(variant, cwd, hidden) + [shell, "-c", script]
    if how[0] == "userns":
        return prefix + ["unshare", "-U", shell, "-c", f"cd {cwd} && {script}"]
    if how[0] in ("nosuid", "host"):
        return prefix + [shell, "-c", f"cd {cwd} && {script}"]
    if how[0] == "caretz":
        env_shell = [f"SHELL=/bin/{shell}"]
        return prefix + env_shell + ["sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", cwd,
                                     CARETZ, "exec", "--no-session", "--json", script]
    raise ValueError(f"unknown capture: {case.get('capture')}")


def run_in_pipe(argv):
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=120)
    return done.returncode, done.stdout


def run_in_pty(argv):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks)


def capture_through_caretz(case):
    """Caretz prints the outcome as JSON on stdout, and its notices on stderr."""
    done = subprocess.run(command_argv(case), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    try:
        outcome = json.loads(done.stdout)
    except ValueError:
        raise RuntimeError(f"caretz exec printed no outcome (exit {done.returncode}): "
                           f"{done.stderr[-500:]!r}")
    return outcome["exit_code"], outcome["output"].encode("utf-8"), []


def capture(case):
    """The exit status, the output and the stand-in's records of running the case."""
    if case.get("capture") == "caretz":
        return capture_through_caretz(case)
    watched = case.get("sudo-watch") != "no"
    if os.path.exists(RECORDS):
        os.unlink(RECORDS)
    if watched:
        reset_records()
    argv = command_argv(case)
    if watched:
        argv = with_stand_in(argv)
    mount = nosuid_sudo() if case.get("capture") == "nosuid" else None
    try:
        runner = run_in_pty if case.get("pty") == "yes" else run_in_pipe
        code, data = runner(argv)
    finally:
        if mount:
            subprocess.run(["umount", mount], check=True)
    return code, data, read_records() if watched else []


def escape(data):
    """The escaped output form: \\e, \\r, \\t, \\\\ and \\xHH for other control bytes."""
    out = []
    for c in data.decode("utf-8", "replace"):
        if c == "\\":
            out.append("\\\\")
        elif c == "\x1b":
            out.append("\\e")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c == "\n" or (ord(c) >= 0x20 and ord(c) != 0x7F):
            out.append(c)
        else:
            out.append(f"\\x{ord(c):02x}")
    return "".join(out)


HEADER = re.compile(r"^=== ")


def split_cases(text):
    """Returns the preamble and a list of case blocks (each starting with its === line)."""
    lines = text.splitlines(keepends=True)
    preamble, blocks = [], []
    for line in lines:
        if HEADER.match(line):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
        else:
            preamble.append(line)
    return "".join(preamble), ["".join(b) for b in blocks]


def parse_fields(block):
    head = block.split("\n--- output", 1)[0]
    fields = {}
    for line in head.splitlines()[1:]:
        key, sep, value = line.partition(": ")
        if sep and key and not key.startswith("#"):
            fields.setdefault(key, value)
    return fields


def recapture(block):
    case = parse_fields(block)
    if case.get("capture") == "none":
        return block
    code, data, runs = capture(case)
    head = block.split("\n--- output", 1)[0]
    head = re.sub(r"^(exit|sudo-run): .*\n?", "", head, flags=re.M)
    recorded = "".join(f"\nsudo-run: {run}" for run in runs)
    head = re.sub(r"^(command: .*)$", lambda m: f"{m.group(1)}\nexit: {code}{recorded}", head,
                  count=1, flags=re.M)
    if case.get("pty") == "yes":
        body = "--- output escaped\n" + escape(data)
    else:
        body = "--- output\n" + data.decode("utf-8", "replace")
    if not body.endswith("\n"):
        body += "\n"
    return head.rstrip("\n") + "\n" + body + "\n"


def main():
    parser = argparse.ArgumentParser(description="Re-captures the cases' outputs.")
    parser.add_argument("--caretz", required=True, help="the Caretz binary: the sudo stand-in, and the sandbox of "
                        "`capture: caretz`")
    parser.add_argument("paths", nargs="+", help="case files to rewrite")
    args = parser.parse_args()
    global CARETZ
    CARETZ = os.path.abspath(args.caretz)
    paths = args.paths
    if os.geteuid() != 0:
        sys.exit("run as root: captures switch to the user cztest and mount tmpfs")
    prepare_user_files()
    prepare_sockets()
    prepare_stand_in(args.caretz)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            preamble, blocks = split_cases(f.read())
        blocks = [recapture(b) for b in blocks]
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", delete=False,
                                         dir=os.path.dirname(os.path.abspath(path))) as out:
            out.write(preamble + "".join(blocks).rstrip("\n") + "\n")
        os.replace(out.name, path)
        print(f"{path}: {len(blocks)} cases")


if __name__ == "__main__":
    main()
