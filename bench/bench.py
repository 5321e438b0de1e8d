#!/usr/bin/python3
"""Caretz benchmarks against its peers (DESIGN.md section 11). Started by bench/run.sh.

Runs as an unprivileged user. Measures, in one run on one machine:
  1. per-command overhead: `true` and `ls /usr` through a warm Caretz session, Caretz's
     per-command modes, `codex sandbox`, `srt`, a bare `bwrap` start and no sandbox at all;
  2. output throughput: 200 MB printed by a command through Caretz to a terminal that the bench
     owns and drains (bench/ptyrun.c), against `script -q -c` and the command on a raw PTY;
  3. detection cost: 1 GB of output with refusal lines spread through it, through Caretz, against
     the raw command; the refusals found, the whole output on the terminal, Caretz's peak RSS;
     with --baseline-caretz, also through another build of Caretz, side by side;
  4. starts: where a one-shot `caretz exec true` spends its time (CARETZ_PHASE_TIMES) and its
     peak RSS, the time to a usable `caretz>` prompt and from `caretz -p` to the first request
     reaching a model API on 127.0.0.1, against a bare bwrap start and the user's rc files.
Writes results.json and RESULTS.md into --out.
"""

import argparse
import codecs
import ctypes
import datetime
import json
import os
import platform
import re
import select
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

# ---------------------------------------------------------------------------------------------
# Workloads

PER_COMMAND = ["true", "ls /usr"]
LINE = "=" * 99  # 99 '=' and a newline: 100 bytes a line; ptyrun counts the '=' that arrive


def configure(throughput_bytes, detect_chunks, detect_chunk_bytes):
    """Sets the workloads' sizes (smaller ones with --quick)."""
    global THROUGHPUT_BYTES, THROUGHPUT_CMD, DETECT_CHUNKS, DETECT_CHUNK_BYTES, DETECT_CMD
    global DETECT_PATHS
    THROUGHPUT_BYTES = throughput_bytes
    THROUGHPUT_CMD = f"yes {LINE} | head -c {THROUGHPUT_BYTES}"
    DETECT_CHUNKS = detect_chunks
    DETECT_CHUNK_BYTES = detect_chunk_bytes  # a refusal line after each chunk
    # Paths in the home folder: the sandbox may not write there, the user may on the host, so
    # each is a refusal worth offering (a path the host refuses too, like /etc, is none).
    DETECT_CMD = (
        f"for i in $(seq 1 {DETECT_CHUNKS}); do yes {LINE} | head -c {DETECT_CHUNK_BYTES}; "
        "printf \"touch: cannot touch '$HOME/caretz-bench-%d': Read-only file system\\n\" $i >&2; "
        "done; false"
    )
    home = os.environ.get("HOME", "")
    DETECT_PATHS = [f"{home}/caretz-bench-{i}" for i in range(1, DETECT_CHUNKS + 1)]


configure(200_000_000, 100, 10_000_000)  # 200 MB; 100 chunks of 10 MB = 1 GB


def shown(cmd):
    """A command shortened for the tables: the 99 '=' become LINE."""
    return cmd.replace(LINE, "$LINE")


# ---------------------------------------------------------------------------------------------
# Helpers


def log(*a):
    print("bench:", *a, file=sys.stderr, flush=True)


def cpu_busy(window):
    """The share of the CPUs' time over the next `window` seconds that went to any work (all but
    idle and waiting for I/O; time the hypervisor took counts as work), from /proc/stat."""
    def sample():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:9]]
        return sum(fields), fields[3] + fields[4]
    total0, idle0 = sample()
    time.sleep(window)
    total1, idle1 = sample()
    return 1 - (idle1 - idle0) / max(1, total1 - total0)


SETTLE_BUSY = 0.10  # the CPUs count as quiet below this share of work
SETTLE_LONGEST = 60  # seconds


def settle(what):
    """Waits until the machine is quiet (SETTLE_BUSY over half a second), SETTLE_LONGEST seconds
    at most. The kernel frees the namespaces of the sandboxes before (the network namespace
    above all) on workers of its own, later: after hundreds of sandboxes that work takes
    seconds, and would land in the next measurement."""
    reap_adopted()
    start = time.monotonic()
    busy = cpu_busy(0.5)
    while busy > SETTLE_BUSY and time.monotonic() - start < SETTLE_LONGEST:
        busy = cpu_busy(0.5)
    waited = time.monotonic() - start
    if waited > 1.5:
        log(f"{what}: waited {waited:.0f} s for the machine to settle "
            f"(the CPUs {busy:.0%} busy then)")


def percentile(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def first_line(text, limit=160):
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:limit]
    return ""


def vm_hwm_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


DEVNULL = os.open(os.devnull, os.O_RDWR)


def adopt_orphans():
    """Makes the bench the reaper of what the commands it runs leave behind (a child
    subreaper): `caretz exec` returns once its command's result is out, and its sandbox winds
    down after that."""
    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def children():
    """The bench's children: {pid: state letter}."""
    me, found = os.getpid(), {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if int(ppid) == me:
            found[int(entry)] = state
    return found


def reap_adopted():
    """Reaps what the untimed runs (throughput, detection, peak RSS) left to the bench and
    has ended since."""
    for pid, state in children().items():
        if state == "Z":
            os.waitpid(pid, os.WNOHANG)


def wait_for_orphans(before, timeout=10):
    """Waits, untimed, until what the last run left behind (children the bench adopted that
    were not there `before` it) is gone, so that its teardown lands in no other measurement.
    Kills what is still there after `timeout` seconds."""
    deadline = time.perf_counter() + timeout
    while left := children().keys() - before:
        for pid in left:
            if time.perf_counter() > deadline:
                log(f"killing pid {pid}, left running by a timed command")
                os.kill(pid, 9)
            os.waitpid(pid, 0)


def spawn_timed(argv, env, stdout_fd=DEVNULL, timeout=60):
    """Runs argv with stdin from /dev/null; returns (seconds, exit status). The time ends when
    argv's process does; what it leaves running is waited for after, untimed."""
    actions = [
        (os.POSIX_SPAWN_DUP2, DEVNULL, 0),
        (os.POSIX_SPAWN_DUP2, stdout_fd, 1),
        (os.POSIX_SPAWN_DUP2, stdout_fd, 2),
    ]
    before = children().keys()
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
        if not ready:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise RuntimeError(f"no end after {timeout} s")
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(pidfd)
    seconds = time.perf_counter() - start
    wait_for_orphans(before)
    return seconds, os.waitstatus_to_exitcode(status)


def capture(argv, env, timeout=120):
    """Runs argv once; returns (exit status, combined output) or raises on timeout."""
    p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace")


# ---------------------------------------------------------------------------------------------
# Harnesses for per-command overhead


class ProcessHarness:
    """A sandbox started per command: argv_for(cmd) is the whole command line."""

    def __init__(self, key, label, argv_for, env, note=""):
        self.key, self.label, self.argv_for, self.env, self.note = key, label, argv_for, env, note
        self.error = None

    def shown_command(self, cmd):
        return " ".join(shlex.quote(a) for a in self.argv_for(cmd))

    def check(self, workspace, expected_ls):
        probe = "bench-probe-" + str(os.getpid())
        try:
            code, out = capture(self.argv_for(f"touch {probe} && ls /usr"), self.env)
        except subprocess.TimeoutExpired:
            return "timed out after 120 s"
        except OSError as e:
            return str(e)
        made = os.path.exists(os.path.join(workspace, probe))
        if made:
            os.unlink(os.path.join(workspace, probe))
        if code != 0:
            return f"exit {code}: {first_line(out)}"
        if not made:
            return "cannot write the workspace"
        if not all(name in out for name in expected_ls):
            return f"unexpected output: {first_line(out)}"
        return None

    def start(self):
        pass

    def stop(self):
        pass

    def time(self, cmd):
        seconds, code = spawn_timed(self.argv_for(cmd), self.env)
        if code != 0:
            raise RuntimeError(f"{self.label}: `{cmd}` exited {code}")
        return seconds


class WarmSession:
    """One Caretz REPL reading `!` lines from a pipe: the session sandbox stays up between
    commands. Each line is `!CMD; echo @CZBn@`; a command's time runs from writing the line to
    reading its marker back (the marker is a builtin echo in the same shell: microseconds).
    The marker comes before Caretz's wrap-up of the command (the end and prompt marks, rendering
    the captured output, detection), so every timed command directly follows an untimed one:
    its time then includes the wrap-up of the command before it, a full cycle."""

    key = "caretz_warm"
    label = "Caretz, warm session (REPL, `!` lines on a pipe)"
    note = ""

    def __init__(self, caretz, env, cwd=None):
        self.caretz, self.env, self.cwd = caretz, env, cwd
        self.phase_times = None  # CARETZ_PHASE_TIMES's file, when given to start()
        self.proc = None
        self.counter = 0
        self.error = None
        self.session_start_s = None
        self.incidents = []

    def shown_command(self, cmd):
        return (f"printf '!{cmd}; echo @CZBn@\\n...' | {self.caretz}  # each timed line follows "
                "an untimed one")

    def start(self, phase_times=None):
        self.stderr = tempfile.TemporaryFile()
        env = dict(self.env, CARETZ_PHASE_TIMES=phase_times) if phase_times else self.env
        self.proc = subprocess.Popen([self.caretz], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0,
                                     cwd=self.cwd)
        self.fd = self.proc.stdout.fileno()
        self.session_start_s, _ = self.run("true")  # starts the sandbox and the session shell

    def stop(self):
        if self.proc:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def run(self, cmd, timeout=30):
        self.counter += 1
        marker = b"@CZB%d@" % self.counter
        line = b"!%s; echo %s\n" % (cmd.encode(), marker)
        got = b""
        start = time.perf_counter()
        self.proc.stdin.write(line)
        while marker + b"\r\n" not in got and marker + b"\n" not in got:
            left = timeout - (time.perf_counter() - start)
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise RuntimeError(f"no answer to `{cmd}` (line {self.counter} to "
                                   f"{self.caretz}) in {timeout} s")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                status = self.proc.wait()
                self.stderr.seek(0)
                said = self.stderr.read().decode(errors="replace").strip().splitlines()
                raise RuntimeError(f"the Caretz REPL ended (status {status}) after "
                                   f"{self.counter} lines" +
                                   (f"; its last words: {said[-1][:200]}" if said else ""))
            got += chunk
        return time.perf_counter() - start, got.decode(errors="replace")

    def check(self, workspace, expected_ls):
        probe = "bench-probe-" + str(os.getpid())
        try:
            self.start()
            _, out = self.run(f"touch {probe} && ls /usr")
        except (RuntimeError, OSError) as e:
            self.stop()
            return str(e)
        made = os.path.exists(os.path.join(workspace, probe))
        if made:
            os.unlink(os.path.join(workspace, probe))
        if not made:
            self.stop()
            return f"cannot write the workspace: {first_line(out)}"
        if not all(name in out for name in expected_ls):
            self.stop()
            return f"unexpected output: {first_line(out)}"
        return None  # stays up: the timed commands run in this session

    def time(self, cmd):
        self.run(cmd)
        seconds, _ = self.run(cmd)
        return seconds

    def time_or_restart(self, cmd, where):
        """time(cmd), or None when the session ended or stopped answering: that is recorded in
        incidents and the session started again (twice at most; then the error is raised), so
        that one incident does not empty its row."""
        try:
            return self.time(cmd)
        except (RuntimeError, OSError) as e:
            if len(self.incidents) >= 2:
                raise
            self.incidents.append(f"`{cmd}`, {where}: {e}")
            log(f"  {self.caretz}: {e}; starting it again")
            self.stop()
            self.start()
            return None


def per_command(harnesses, n, workspace):
    expected_ls = sorted(os.listdir("/usr"))
    times = {h.key: {c: [] for c in PER_COMMAND} for h in harnesses}
    live = []
    for h in harnesses:
        log(f"checking {h.label}")
        h.error = h.check(workspace, expected_ls)
        if h.error:
            log(f"  cannot run: {h.error}")
        else:
            live.append(h)
    # Rounds: every harness runs the command once per round, in a rotating order, so that load
    # from anything else on the machine spreads evenly over all of them.
    for cmd in PER_COMMAND:
        settle(f"per-command `{cmd}`")
        log(f"per-command: {n} x `{cmd}` through {len(live)} harnesses")
        for i in range(n):
            order = live[i % len(live):] + live[:i % len(live)]
            for h in order:
                if h.error:
                    continue
                try:
                    t = (h.time_or_restart(cmd, f"round {i + 1}") if isinstance(h, WarmSession)
                         else h.time(cmd))
                    if t is not None:
                        times[h.key][cmd].append(t)
                except (RuntimeError, OSError) as e:
                    h.error = f"failed during the run: {e}"
                    log(f"  {h.label}: {h.error}")
    for h in live:
        h.stop()
    rows = []
    for h in harnesses:
        row = {"key": h.key, "label": h.label, "note": h.note, "error": h.error,
               "command": h.shown_command("CMD")}
        for cmd in PER_COMMAND:
            t = times[h.key][cmd]
            if t and not h.error:
                row[cmd] = {"n": len(t), "median_ms": statistics.median(t) * 1e3,
                            "p95_ms": percentile(t, 95) * 1e3, "min_ms": min(t) * 1e3,
                            "max_ms": max(t) * 1e3}
        if isinstance(h, WarmSession):
            if h.session_start_s is not None:
                row["session_start_ms"] = h.session_start_s * 1e3
            row["incidents"] = h.incidents
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# Starts: one-shot commands, the REPL's prompt, the first request of `caretz -p`


def peak_rss_kb(argv, env, tmp):
    """ru_maxrss of argv in KiB, through GNU time: the largest of the process and the
    descendants it waited for. (From Python it would count the Python process itself: a child
    keeps the high-water mark of the memory it was forked or vforked with.)"""
    out = os.path.join(tmp, "maxrss")
    code, said = capture(["/usr/bin/time", "-f", "%M", "-o", out] + argv, env)
    if code != 0:
        raise RuntimeError(f"`{' '.join(argv)}` exited {code}: {first_line(said)}")
    with open(out) as f:
        return int(f.read().split()[-1])


def end_process(pid, grace):
    """Waits up to `grace` seconds for pid to end, then kills it; reaps it either way."""
    deadline = time.perf_counter() + grace
    while time.perf_counter() < deadline:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)


def time_on_pty(argv, env, text, timeout=20, cwd=None):
    """Starts argv on a new PTY (in `cwd`); seconds until `text` appears in its output. Ends
    it with Ctrl-D (then SIGKILL)."""
    start = time.perf_counter()
    pid, fd = os.forkpty()
    if pid == 0:
        try:
            if cwd:
                os.chdir(cwd)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    got = b""
    try:
        while text not in got:
            left = timeout - (time.perf_counter() - start)
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise RuntimeError(f"no {text!r} in {timeout} s: {first_line(got.decode(errors='replace'))}")
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                raise RuntimeError(f"ended before {text!r}: {first_line(got.decode(errors='replace'))}")
            got += chunk
        return time.perf_counter() - start
    finally:
        try:
            os.write(fd, b"\x04")
        except OSError:
            pass  # it has ended already
        end_process(pid, 5)
        os.close(fd)


def time_to_request(argv, env, timeout=20):
    """Starts argv (`caretz -p`) against a model API on 127.0.0.1 that never answers; seconds
    until a request's first bytes arrive. The process is then killed."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]
    env = dict(env, CARETZ_BASE_URL=f"http://127.0.0.1:{port}/v1", CARETZ_API_KEY="sk-bench")
    actions = [(os.POSIX_SPAWN_DUP2, DEVNULL, fd) for fd in (0, 1, 2)]
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    try:
        if not select.select([server], [], [], timeout)[0]:
            raise RuntimeError(f"no request in {timeout} s")
        conn, _ = server.accept()
        if not select.select([conn], [], [], timeout)[0] or not conn.recv(1):
            raise RuntimeError("a connection but no request")
        took = time.perf_counter() - start
        conn.close()
        return took
    finally:
        end_process(pid, 0)
        server.close()


def caretz_bwrap_argv(args, env, tmp):
    """The bwrap command line `caretz exec --no-session true` runs, read with strace, made to
    run on its own: the same mounts and namespaces (the policy), `bash -c true` inside, and
    without what only Caretz can give a start (descriptors it passes: the JSON status, the
    seccomp filter and its own binary, bound over the watched programs, which become
    /bin/true; the proxy socket and the run records, which are gone once it ends). bwrap gets
    its options over a socket (`--args`), so they are read from Caretz's send of them."""
    trace = os.path.join(tmp, "exec.strace")
    subprocess.run(["strace", "-f", "-qq", "-s", "1000000", "-e", "trace=sendto", "-o", trace,
                    args.caretz, "exec", "--no-session", "true"], env=env,
                   cwd=args.workspace, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True, timeout=60)
    with open(trace, errors="replace") as f:
        sent = next((m.group(1) for m in (re.search(r'sendto\(\d+, "(--die-with-parent.*)", \d+,', l)
                                          for l in f) if m), None)
    if sent is None:
        raise RuntimeError("caretz exec gave bwrap no arguments")
    options = codecs.escape_decode(sent.encode())[0].decode().split("\0")[:-1]
    out, i = [], 0
    while i < len(options):
        a = options[i]
        if a in ("--json-status-fd", "--seccomp"):
            i += 2
        elif a in ("--ro-bind", "--bind") and options[i + 1].startswith("/proc/self/fd/"):
            out += [a, "/bin/true", options[i + 2]]
            i += 3
        elif a == "--bind" and options[i + 2].startswith("/.caretz/"):
            i += 3
        else:
            out.append(a)
            i += 1
    return [shutil.which("bwrap")] + out + ["--", "/bin/bash", "-c", "true"]


def phase_times(path):
    """The phases a CARETZ_PHASE_TIMES file holds (sandbox/phase_times.h): (name, seconds)."""
    with open(path) as f:
        return [(name, int(micros) / 1e6) for name, micros in
                (line.rsplit(" ", 1) for line in f)]


def starts(args, env, tmp, n):
    """Where a one-shot start's time goes, the peak RSS, and the two starts a user waits for."""
    res = {"n": n}
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    ws = args.workspace
    bare = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--bind", ws, ws, "--chdir", ws, "--unshare-all", "--new-session",
            "--die-with-parent", "--", "/bin/bash", "-c", "true"]
    shell = env.get("SHELL", "/bin/bash")
    policy = caretz_bwrap_argv(args, env, tmp)
    runs = {
        "bwrap": bare,
        # What a per-command start cannot do without: that sandbox, the user's shell in it.
        "bwrap_policy": policy[:-3] + [shell, "-c", "true"],
        # What session mode cannot do without: that sandbox, with the user's shell reading its rc.
        "bwrap_policy_rc": policy[:-3] + [shell, "-i", "-c", "true"],
        "shell": [shell, "-c", "true"],
        "shell_rc": [shell, "-i", "-c", "true"],
        "version": [args.caretz, "--version"],
        "caretz_exec": [args.caretz, "exec", "true"],
        "caretz_fresh": [args.caretz, "exec", "--no-session", "true"],
    }
    wall = {k: [] for k in runs}
    phases = {k: {} for k in ("caretz_exec", "caretz_fresh")}
    times_file = os.path.join(tmp, "phase-times")
    settle("starts")
    log(f"starts: {n} rounds of {', '.join(runs)}")
    for i in range(n):
        keys = list(runs)
        keys = keys[i % len(keys):] + keys[:i % len(keys)]
        for key in keys:
            e = env
            if key in phases:
                if os.path.exists(times_file):
                    os.unlink(times_file)
                e = dict(env, CARETZ_PHASE_TIMES=times_file)
            seconds, code = spawn_timed(runs[key], e)
            if code != 0 and key not in ("shell_rc", "bwrap_policy_rc"):
                raise RuntimeError(f"`{' '.join(runs[key])}` exited {code}")
            wall[key].append(seconds)
            if key in phases:
                for name, seconds in phase_times(times_file):
                    phases[key].setdefault(name, []).append(seconds)
    res["wall_ms"] = {k: statistics.median(v) * 1e3 for k, v in wall.items()}
    res["maxrss_kb"] = {k: max(peak_rss_kb(argv, env, tmp) for _ in range(5))
                        for k, argv in runs.items() if k not in ("shell_rc", "bwrap_policy_rc")}
    res["commands"] = {k: " ".join(shlex.quote(a) for a in v) for k, v in runs.items()}
    res["phases"] = {}
    for key, by_name in phases.items():
        rows = [(name, statistics.median(v) * 1e3) for name, v in by_name.items()]
        rows.append(("outside the phases: exec, loading the binary's libraries, exit",
                     res["wall_ms"][key] - sum(ms for _, ms in rows)))
        res["phases"][key] = rows

    # The prompt and the first request, fewer times: each is a whole REPL.
    prompt, request = [], []
    k = max(5, n // 5)
    log(f"starts: {k} x the REPL's first prompt, {k} x `caretz -p` to its first request")
    errors = {}
    for _ in range(k):
        try:
            prompt.append(time_on_pty([args.caretz], env, b"caretz>"))
        except (RuntimeError, OSError) as e:
            errors["prompt"] = str(e)
        try:
            request.append(time_to_request([args.caretz, "-p", "hello"], env))
        except (RuntimeError, OSError) as e:
            errors["request"] = str(e)
    res["prompt_ms"] = statistics.median(prompt) * 1e3 if prompt else None
    res["request_ms"] = statistics.median(request) * 1e3 if request else None
    res["errors"] = errors
    res["rounds_repl"] = k
    return res


def starts_table(st):
    w = st["wall_ms"]
    lines = ["| what | median ms | / bare bwrap | / bwrap, Caretz's policy | peak RSS |",
             "|---|---:|---:|---:|---:|"]
    labels = [("bwrap", "bare `bwrap` start, the minimal policy of the per-command table"),
              ("bwrap_policy", "bare `bwrap` start with Caretz's own policy (its mounts and "
               "namespaces, read from `caretz exec --no-session true` with strace) running "
               "`$SHELL -c true`"),
              ("bwrap_policy_rc", "the same bwrap running `$SHELL -i -c true` (the user's rc "
               "files read in that sandbox, as a session shell reads them)"),
              ("shell", "the user's shell, `$SHELL -c true`"),
              ("shell_rc", "the user's shell with its rc files, `$SHELL -i -c true`"),
              ("version", "`caretz --version` (loading the binary, no sandbox)"),
              ("caretz_exec", "`caretz exec true` (session mode)"),
              ("caretz_fresh", "`caretz exec --no-session true`")]
    for key, label in labels:
        rss = st["maxrss_kb"].get(key)
        lines.append(f"| {label} | {fmt(w[key], 2)} | {fmt(ratio(w[key], w['bwrap']), 2)} | "
                     f"{fmt(ratio(w[key], w['bwrap_policy']), 2)} | "
                     f"{fmt(rss / 1024, 1) + ' MB' if rss else '-'} |")
    for key, label in [("prompt_ms", "`caretz` to a usable `caretz>` prompt (on a PTY)"),
                       ("request_ms", "`caretz -p` to its first request reaching the model API")]:
        v = st.get(key)
        lines.append(f"| {label} | {fmt(v, 2) if v else 'failed'} | "
                     f"{fmt(ratio(v, w['bwrap']), 2) if v else ''} | | |")
    return lines


def phases_table(st):
    lines = ["| phase | `exec true` ms | `exec --no-session true` ms |", "|---|---:|---:|"]
    s = dict(st["phases"]["caretz_exec"])
    f = dict(st["phases"]["caretz_fresh"])
    names = list(s) + [n for n in f if n not in s]
    names.sort(key=lambda n: n.startswith("outside"))
    for name in names:
        lines.append(f"| {name} | {fmt(s.get(name), 2) if name in s else '-'} | "
                     f"{fmt(f.get(name), 2) if name in f else '-'} |")
    lines.append(f"| **whole run (median wall time)** | {fmt(st['wall_ms']['caretz_exec'], 2)} | "
                 f"{fmt(st['wall_ms']['caretz_fresh'], 2)} |")
    return lines


def start_targets(st):
    w = st["wall_ms"]
    verdicts = []
    # The yardsticks DESIGN.md section 11 names (decided 2026-12-04): each mode against bwrap
    # with the same policy doing the same work. Session mode runs the user's shell with its rc,
    # so it is held against that bwrap running `$SHELL -i -c true`, at most 1.5x; a per-command
    # start against that bwrap running `$SHELL -c true`, at most 2x. The ratio to the minimal
    # bwrap is in the table beside them.
    for key, name, base, base_name, most in [
            ("caretz_exec", "`caretz exec true`", "bwrap_policy_rc", "`$SHELL -i -c true`", 1.5),
            ("caretz_fresh", "`caretz exec --no-session true`", "bwrap_policy", "`$SHELL -c true`",
             2)]:
        q = ratio(w[key], w[base])
        verdicts.append((f"{name} <= {most}x bare bwrap with the same policy running {base_name}",
                         q is not None and q <= most,
                         f"{fmt(q, 2)}x ({fmt(w[key], 2)} against {fmt(w[base], 2)} ms;"
                         f" {fmt(ratio(w[key], w['bwrap']), 2)}x the minimal bwrap's "
                         f"{fmt(w['bwrap'], 2)} ms)"))
    rc = max(0.0, w["shell_rc"] - w["shell"])
    bound = 2 * w["bwrap"] + rc
    for key, name in [("prompt_ms", "`caretz` to its first prompt"),
                      ("request_ms", "`caretz -p` to its first request")]:
        v = st.get(key)
        if v is None:
            verdicts.append((f"{name} <= 2x bare bwrap + rc time", False,
                             "failed: " + st["errors"].get(key.split("_")[0], "?")))
            continue
        verdicts.append((f"{name} <= 2x bare bwrap + rc time", v <= bound,
                         f"{fmt(v, 2)} ms against {fmt(bound, 2)} ms (2 x {fmt(w['bwrap'], 2)} "
                         f"+ rc {fmt(rc, 2)})"))
    r = st["maxrss_kb"]["caretz_exec"] / 1024
    verdicts.append(("peak RSS of `caretz exec true` <= 6 MB", r <= 6,
                     f"{fmt(r, 2)} MB (the largest of 5 runs)"))
    return verdicts


# ---------------------------------------------------------------------------------------------
# Throughput and detection: commands on a terminal that ptyrun owns


def ptyrun(ptyrun_bin, argv, env, extra=(), tail=None, timeout=300):
    args = [ptyrun_bin, "--count", "="] + list(extra)
    if tail:
        args += ["--tail", tail]
    try:
        p = subprocess.run(args + ["--"] + argv, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"no end after {timeout} s")
    if p.returncode != 0:
        raise RuntimeError(f"ptyrun failed: {first_line(p.stderr.decode(errors='replace'))}")
    return json.loads(p.stdout)


def throughput(args, env, tmp):
    repl_input = os.path.join(tmp, "throughput.repl")
    with open(repl_input, "w") as f:
        f.write(f"!echo CZB_START\n!{THROUGHPUT_CMD}; echo CZB_END\n")
    # Typed at the prompt, the line is echoed. It holds no '=' (the session makes the line of '=',
    # written \075, into $1) and no marker (quotes split them): only the command's output counts.
    repl_typed = os.path.join(tmp, "throughput.typed")
    with open(repl_typed, "w") as f:
        f.write("!set -- $(printf %099d 0 | tr 0 '\\075'); echo CZB_S''TART; "
                f"yes $1 | head -c {THROUGHPUT_BYTES}; echo CZB_E''ND\r")
    markers = ["--start", "CZB_START", "--end", "CZB_END"]
    c = args.caretz
    cases = [
        ("raw", "raw PTY: the command itself on the bench's terminal",
         ["/bin/bash", "-c", THROUGHPUT_CMD], []),
        ("script", "`script -q -c CMD /dev/null` (util-linux)",
         ["/usr/bin/script", "-q", "-c", THROUGHPUT_CMD, "/dev/null"], []),
        ("caretz_warm", "Caretz, warm session (REPL on its terminal, the `!` line typed at the "
         "prompt; the timed part is the one command)",
         [c], ["--type", repl_typed, "--prompt", "caretz>"] + markers),
        ("caretz_piped", "Caretz, warm session (REPL with the `!` lines on stdin from a file, "
         "output to the terminal; the timed part is the one command)",
         [c], ["--stdin", repl_input] + markers),
        ("caretz_exec", "Caretz `exec` (session mode, includes starting the session)",
         [c, "exec", THROUGHPUT_CMD], []),
        ("caretz_fresh", "Caretz `exec --no-session` (fresh sandbox; output through a pipe)",
         [c, "exec", "--no-session", THROUGHPUT_CMD], []),
    ]
    expected = THROUGHPUT_BYTES // 100 * 99
    results = {key: {"label": label, "argv": argv, "ptyrun": extra, "runs": [], "error": None}
               for key, label, argv, extra in cases}
    for rep in range(args.throughput_reps):
        log(f"throughput: round {rep + 1} of {args.throughput_reps}")
        order = cases[rep % len(cases):] + cases[:rep % len(cases)]
        for key, label, argv, extra in order:
            if results[key]["error"]:
                continue
            settle(f"throughput: {label}")
            try:
                r = ptyrun(args.ptyrun, argv, env, extra)
            except RuntimeError as e:
                results[key]["error"] = str(e)
                log(f"  {label}: {e}")
                continue
            r["expected"] = expected
            r["complete"] = r["count"] == expected and r["start_found"] and (
                r["end_found"] or "--end" not in extra)
            r["mb_s"] = THROUGHPUT_BYTES / 1e6 / r["wall_s"]
            results[key]["runs"].append(r)
    for key, res in results.items():
        runs = res["runs"]
        res["command"] = ("ptyrun " + " ".join(shlex.quote(a) for a in res["ptyrun"]) + " -- " +
                          " ".join(shlex.quote(shown(a)) for a in res["argv"]))
        if res["error"] or not runs:
            res.update({"mb_s": None, "wall_s": None, "complete": False, "hwm_kb": -1})
            continue
        res["mb_s"] = statistics.median(r["mb_s"] for r in runs)
        res["wall_s"] = statistics.median(r["wall_s"] for r in runs)
        res["complete"] = all(r["complete"] for r in runs)
        worst = max(runs, key=lambda r: abs(r["count"] - expected))
        res["exact"] = "yes" if res["complete"] else (
            exactness(worst["count"], expected) if worst["count"] != expected
            else "**no**: the start or end marker never showed")
        res["hwm_kb"] = max(r["hwm_kb"] for r in runs)
    return results


def refusals_in_notice(tail):
    """How many of DETECT_PATHS the last notice on the terminal (`caretz: the sandbox refused
    write ...`, in the tail ptyrun kept) names."""
    with open(tail, "rb") as f:
        lines = f.read().decode(errors="replace").splitlines()
    notice = [l for l in lines if l.startswith("caretz: the sandbox refused")]
    found = re.findall(r"write (/\S+/caretz-bench-\d+)", notice[-1]) if notice else []
    return len(set(found) & set(DETECT_PATHS))


def detection(args, env, tmp):
    c = args.caretz
    expected = DETECT_CHUNKS * DETECT_CHUNK_BYTES // 100 * 99
    out = {"command": shown(DETECT_CMD), "bytes": DETECT_CHUNKS * DETECT_CHUNK_BYTES,
           "refusal_lines": DETECT_CHUNKS}
    cases = [
        ("raw", "the command on a raw PTY", ["/bin/bash", "-c", DETECT_CMD]),
        ("script", "`script -q -c CMD /dev/null` (two PTYs, as in a Caretz session)",
         ["/usr/bin/script", "-q", "-c", DETECT_CMD, "/dev/null"]),
        ("caretz_exec", "Caretz `exec` (session mode) on a PTY", [c, "exec", DETECT_CMD]),
        ("caretz_fresh", "Caretz `exec --no-session` on a PTY",
         [c, "exec", "--no-session", DETECT_CMD]),
    ]
    for key, label, argv in cases:
        settle(f"detection: {label}")
        log(f"detection: {label}")
        tail = os.path.join(tmp, f"detect-{key}.tail")
        command = "ptyrun --count = -- " + " ".join(shlex.quote(shown(a)) for a in argv)
        try:
            r = ptyrun(args.ptyrun, argv, env, tail=tail, timeout=900)
        except RuntimeError as e:
            log(f"  {label}: {e}")
            out[key] = {"label": label, "command": command, "error": str(e)}
            continue
        r.update({"label": label, "command": command, "error": None,
                  "output_complete": r["count"] == expected,
                  "exact": exactness(r["count"], expected),
                  "refusals_in_notice": refusals_in_notice(tail)})
        out[key] = r
    # The same command with --json: its "refusals" list is what the pipeline decided.
    log("detection: Caretz `exec --json`")
    json_path = os.path.join(tmp, "detect.json")
    j = {"label": "Caretz `exec --json` (stdout to a file)",
         "command": f"{c} exec --json {shlex.quote(shown(DETECT_CMD))} > detect.json",
         "error": None}
    with open(json_path, "wb") as f:
        start = time.perf_counter()
        p = subprocess.Popen([c, "exec", "--json", DETECT_CMD], env=env, stdin=subprocess.DEVNULL,
                             stdout=f, stderr=subprocess.DEVNULL)
        hwm = -1
        while p.poll() is None and time.perf_counter() - start < 900:
            hwm = max(hwm, vm_hwm_kb(p.pid))
            time.sleep(0.01)
        if p.poll() is None:
            p.kill()
            p.wait()
            j["error"] = "no end after 900 s"
        wall = time.perf_counter() - start
    try:
        with open(json_path) as f:
            result = json.loads(f.read())
    except ValueError as e:
        j["error"] = j["error"] or f"no JSON: {e}"
        result = {}
    subjects = [r.get("subject") for r in result.get("refusals", []) if r.get("kind") == "write"]
    j.update({"wall_s": wall, "hwm_kb": hwm, "exit": result.get("exit_code"),
              "refusals": len(result.get("refusals", [])),
              "refusals_expected_found": len(set(subjects) & set(DETECT_PATHS)),
              "output_chars": len(result.get("output", ""))})
    out["caretz_json"] = j
    return out


def detection_against_baseline(args, env, tmp):
    """The detection workload through this build and a baseline build (--baseline-caretz),
    alternating, args.reps times each, so that load on the machine falls on both alike."""
    out = {"baseline": args.baseline_caretz, "baseline_commit": args.baseline_commit,
           "this": args.caretz, "this_commit": args.commit, "reps": args.reps, "rows": []}
    modes = [("caretz_exec", "`exec` (session mode) on a PTY", ["exec"]),
             ("caretz_fresh", "`exec --no-session` on a PTY", ["exec", "--no-session"])]
    for key, label, mode in modes:
        row = {"key": key, "label": label, "baseline": [], "this": [], "refusals": {},
               "error": None}
        for rep in range(args.reps):
            for who, binary in (("baseline", args.baseline_caretz), ("this", args.caretz)):
                log(f"detection against the baseline: {who} {label}, run {rep + 1}")
                tail = os.path.join(tmp, f"baseline-{key}-{who}.tail")
                try:
                    r = ptyrun(args.ptyrun, [binary] + mode + [DETECT_CMD], env, tail=tail,
                               timeout=900)
                except RuntimeError as e:
                    row["error"] = f"{who}: {e}"
                    continue
                row[who].append(r["wall_s"])
                row["refusals"][who] = min(row["refusals"].get(who, DETECT_CHUNKS),
                                           refusals_in_notice(tail))
        out["rows"].append(row)
    return out


# ---------------------------------------------------------------------------------------------
# Git repositories under the writable roots: the start-up search and the check after each command


def make_folders(root, total):
    """Exactly `total` folders, root included: up to 600 top folders with the rest spread
    evenly below them, as in a build tree."""
    os.makedirs(root)
    tops = min(600, total - 1)
    rest = total - 1 - tops
    for i in range(tops):
        top = os.path.join(root, "t%03d" % i)
        os.mkdir(top)
        for j in range(rest // tops + (1 if i < rest % tops else 0)):
            os.mkdir(os.path.join(top, "o%04d" % j))
    return total


def sysctl_limit(name):
    """A limit from /proc/sys (a path below it, such as fs/inotify/max_user_watches)."""
    try:
        with open(f"/proc/sys/{name}") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def repositories(args, env, sizes):
    """For each workspace size: a warm session started in it (its first command includes the
    start-up search), then `true` n times, alternating between Caretz and, with --baseline,
    a build from before the repository watch. Also the time to the `caretz>` prompt on a PTY
    there, and Caretz's own time for the search (its `repository search` phase) in each of
    those starts."""
    binaries = [("with", args.caretz)]
    if args.baseline_caretz:
        binaries.append(("without", args.baseline_caretz))
    rows = []
    times_file = os.path.join(args.out, "repo-phase-times")
    previous = 0
    for size in sizes + [1]:
        ws = os.path.join(args.out, f"repo-ws-{size}")
        shutil.rmtree(ws, ignore_errors=True)
        made = make_folders(ws, size)
        log(f"repositories: {made} folders; warm sessions started there")
        row = {"folders": made, "n": args.n, "error": None}
        sessions = {}
        try:
            # The kernel frees the inotify watches and fanotify marks of a Caretz that ended (up
            # to the user's limit each) a little later, on a worker, and counts them against the
            # limit until then: in and right after a large workspace, each measurement starts
            # once the machine has settled after the one before.
            pause = 5 if max(made, previous) >= 100_000 else 0
            previous = made
            # Every start here searches the workspace: each one's search is a sample of it (the
            # search's time moves with the kernel's caches, see bench/NOTES.md). The first two
            # find no record of an earlier search (search_record.h); the later ones start from
            # the record the one before left.
            if os.path.exists(times_file):
                os.unlink(times_file)
            prompt = []
            first_starts = 0
            for i in range(4):
                if i < 2:
                    forget_search_records(env)
                time.sleep(pause)
                settle(f"repositories: {made} folders")
                prompt.append(time_on_pty([args.caretz], dict(env, CARETZ_PHASE_TIMES=times_file),
                                          b"caretz>", cwd=ws))
                if i == 1:
                    first_starts = len(phase_times(times_file))
            row["prompt_ms"] = statistics.median(prompt) * 1e3
            time.sleep(pause)
            settle(f"repositories: {made} folders")
            for key, binary in binaries:
                s = WarmSession(binary, env, cwd=ws)
                s.start(phase_times=times_file if key == "with" else None)
                sessions[key] = s
                row[f"{key}_start_ms"] = s.session_start_s * 1e3
            times = phase_times(times_file)
            searches = [[seconds * 1e3 for name, seconds in part if name == "repository search"]
                        for part in (times[:first_starts], times[first_starts:])]
            row["first_search_runs_ms"], row["search_runs_ms"] = searches
            row["first_search_ms"] = statistics.median(searches[0])
            row["search_ms"] = statistics.median(searches[1])
            for key, s in sessions.items():
                s.stderr.seek(0)
                said = s.stderr.read().decode(errors="replace").strip()
                if said:
                    row[f"{key}_said"] = said[:300]
            times = {key: [] for key in sessions}
            keys = list(sessions)
            # Past the inotify watch limit each command compares the change times of every
            # unwatched folder (seconds at 300,000 folders here): fewer runs at that size.
            row["n"] = args.n if made < 100_000 else min(args.n, 20)
            for i in range(row["n"]):
                for key in keys[i % len(keys):] + keys[:i % len(keys)]:
                    # The build from before the repository watch predates 58bbb99: now and
                    # then the end of input it offers a command reaches its shell's prompt and
                    # ends it. Such a session is started again, as in the per-command rounds.
                    t = sessions[key].time_or_restart("true", f"command {i + 1}")
                    if t is not None:
                        times[key].append(t)
            for key, t in times.items():
                row[f"{key}_median_ms"] = statistics.median(t) * 1e3
                row[f"{key}_p95_ms"] = percentile(t, 95) * 1e3
        except (RuntimeError, OSError) as e:
            row["error"] = str(e)
            log(f"  failed: {e}")
        finally:
            row["incidents"] = [f"{key} the watch (`{s.caretz}`), {incident}"
                                for key, s in sessions.items() for incident in s.incidents]
            for s in sessions.values():
                s.stop()
            shutil.rmtree(ws, ignore_errors=True)
        rows.append(row)
    return {"rows": rows, "inotify_limit": sysctl_limit("fs/inotify/max_user_watches"),
            "fanotify_limit": sysctl_limit("fs/fanotify/max_user_marks"),
            "baseline": args.baseline_commit,
            "baseline_ran": bool(args.baseline_caretz)}


def forget_search_records(env):
    """Removes the records of earlier searches (sandbox/protection/search_record.h) from the state folder
    of the user the bench runs as, so that the next start searches the whole workspace."""
    state = env.get("XDG_STATE_HOME") or os.path.join(env["HOME"], ".local", "state")
    folder = os.path.join(state, "caretz")
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        if name.startswith("search-"):
            os.unlink(os.path.join(folder, name))


def search_spread(row, key="search_runs_ms"):
    """How many starts' searches the median is of, and their range, as in " (median of 4: 570.1
    to 801.2)"; empty for one (results from before the bench took each start's)."""
    runs = row.get(key, [])
    return f" (median of {len(runs)}: {fmt(min(runs))} to {fmt(max(runs))})" if len(runs) > 1 else ""


def repositories_table(rep):
    out = []
    rows = rep["rows"]
    empty = next((r for r in rows if r["folders"] == 1), None)
    # The build from before the watch runs only with --baseline: without it, no columns for it.
    baseline = any("without_median_ms" in r for r in rows)
    head = ["workspace", "the search, no record (Caretz's phase)",
            "the search, from the record", "`caretz>` prompt on a PTY",
            "session start", "start-up added by the search", "warm `true`, median (p95)"]
    if baseline:
        head += ["without the watch, median (p95)", "per-command difference"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|---|" + "---:|" * (len(head) - 1))
    for r in rows:
        if r.get("error"):
            out.append(f"| {r['folders']} folders | failed: {r['error']} |" + " |" * (len(head) - 2))
            continue
        added = (r["with_start_ms"] - empty["with_start_ms"]) if empty and \
            empty.get("with_start_ms") else None
        first = (f"{fmt(r['first_search_ms'])} ms{search_spread(r, 'first_search_runs_ms')}"
                 if "first_search_ms" in r else "-")
        search = f"{fmt(r['search_ms'])} ms{search_spread(r)}" if "search_ms" in r else "-"
        prompt = f"{fmt(r['prompt_ms'])} ms" if "prompt_ms" in r else "-"
        cells = [f"{r['folders']:,} folders ({r['n']} runs)", first, search, prompt,
                 f"{fmt(r['with_start_ms'])} ms",
                 f"{fmt(added)} ms" if added is not None else "-",
                 f"{fmt(r['with_median_ms'], 3)} ({fmt(r['with_p95_ms'], 3)}) ms"]
        if baseline:
            has = "without_median_ms" in r
            cells.append(f"{fmt(r['without_median_ms'], 3)} ({fmt(r['without_p95_ms'], 3)}) ms"
                         if has else "-")
            cells.append(f"{r['with_median_ms'] - r['without_median_ms']:+.3f} ms" if has else "-")
        out.append("| " + " | ".join(cells) + " |")
    return out


# ---------------------------------------------------------------------------------------------
# The machine and the versions


def machine():
    info = {"nproc": os.cpu_count(), "kernel": platform.release()}
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            info["cpu"] = m.group(1) if m else "?"
        with open("/proc/meminfo") as f:
            m = re.search(r"^MemTotal:\s*(\d+) kB", f.read(), re.M)
            info["memory"] = f"{int(m.group(1)) / 1024 / 1024:.1f} GiB" if m else "?"
        with open("/etc/os-release") as f:
            m = re.search(r'^PRETTY_NAME="?(.*?)"?$', f.read(), re.M)
            info["os"] = m.group(1) if m else "?"
    except OSError:
        pass
    return info


def version(argv, env):
    try:
        code, out = capture(argv, env, timeout=30)
        return first_line(out, 80) if code == 0 else f"? (exit {code})"
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"? ({e})"


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# ---------------------------------------------------------------------------------------------
# The report


def exactness(got, expected):
    """'yes' when exactly the payload's '=' arrived, else how many more or fewer."""
    if got == expected:
        return "yes"
    return f"**no**: {got - expected:+d} `=` bytes"


def fmt(x, digits=1):
    return "n/a" if x is None else f"{x:.{digits}f}"


def ratio(a, b):
    return None if not a or not b else a / b


def per_command_table(rows):
    warm = next((r for r in rows if r["key"] == "caretz_warm"), {})
    lines = ["| harness | `true` median ms | `true` p95 ms | `ls /usr` median ms | "
             "`ls /usr` p95 ms | median / warm Caretz (`true`, `ls`) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["error"]:
            lines.append(f"| {r['label']} | cannot run here: {r['error']} | | | | |")
            continue
        cells = [r["label"]]
        ratios = []
        for cmd in PER_COMMAND:
            s = r.get(cmd)
            cells += [fmt(s and s["median_ms"], 2), fmt(s and s["p95_ms"], 2)]
            w = warm.get(cmd)
            ratios.append(fmt(ratio(s and s["median_ms"], w and w["median_ms"]), 1) + "x")
        cells.append(", ".join(ratios))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def repository_targets(rep):
    verdicts = []
    by = {r["folders"]: r for r in rep["rows"] if not r.get("error")}
    empty = by.get(1)
    for r in rep["rows"]:
        if r["folders"] < 4000:
            continue
        name = f"{r['folders']:,} folders"
        if r.get("error"):
            verdicts.append((f"{name}: the repository watch runs", False, "failed: " + r["error"]))
            continue
        if r["folders"] < 100_000 and "without_median_ms" in r:
            d = r["with_median_ms"] - r["without_median_ms"]
            verdicts.append((f"{name}: warm per-command median grows by <= 1 ms", d <= 1,
                             f"{d:+.3f} ms ({fmt(r['with_median_ms'], 3)} against "
                             f"{fmt(r['without_median_ms'], 3)} ms)"))
        if r["folders"] >= 100_000 and empty:
            # "Well under a second": the search itself, with and without a record of the one
            # before, and what it adds to the start, each at most three quarters of one.
            added = r["with_start_ms"] - empty["with_start_ms"]
            first = r.get("first_search_ms", float("inf"))
            search = r.get("search_ms", float("inf"))
            verdicts.append((f"{name}: searched at the start in well under 1 s (<= 750 ms)",
                             first <= 750 and search <= 750 and added <= 750,
                             f"the first search there {fmt(first)} ms"
                             f"{search_spread(r, 'first_search_runs_ms')}, later ones from its "
                             f"record {fmt(search)} ms{search_spread(r)}; the session starts "
                             f"{fmt(added)} ms later than in an empty folder"))
    return verdicts


def targets(rows, tput, det, rep=None, st=None):
    by = {r["key"]: r for r in rows}
    warm = by.get("caretz_warm", {})
    verdicts = repository_targets(rep) if rep else []
    if st:
        verdicts += start_targets(st)

    def med(key, cmd="true"):
        r = by.get(key)
        if not r or r["error"] or not r.get(cmd):
            return None
        return r[cmd]["median_ms"]

    w = med("caretz_warm")
    if w is None:
        verdicts.append(("warm per-command median <= 5 ms (`true`)", False,
                         "failed: " + str((by.get("caretz_warm") or {}).get("error"))))
    else:
        verdicts.append(("warm per-command median <= 5 ms (`true`)", w <= 5,
                         f"{fmt(w, 2)} ms (`ls /usr`: {fmt(med('caretz_warm', 'ls /usr'), 2)} ms)"))
    for key, name in [("codex_native", "codex sandbox (native binary)"),
                      ("codex_npm", "codex sandbox (npm launcher)"), ("srt", "srt")]:
        r = by.get(key)
        if not r:
            continue
        if r["error"]:
            verdicts.append((f">= 30x faster than {name}", None, "peer cannot run here"))
            continue
        # Judged on `true`, which is all overhead. `ls /usr` costs ~2 ms of its own (fork, exec)
        # in any sandbox or none, which caps its ratio at the peer's time over that.
        q = [ratio(med(key, c), med("caretz_warm", c)) for c in PER_COMMAND]
        ok = q[0] is not None and q[0] >= 30
        verdicts.append((f">= 30x faster than {name} (on `true`)", ok,
                         f"{fmt(q[0], 0)}x (`true`); {fmt(q[1], 0)}x with `ls /usr`, whose own "
                         f"cost is {fmt(med('none', 'ls /usr'), 2)} ms without any sandbox"))
    if tput:
        s = tput["script"]["mb_s"]
        for key, short in [("caretz_warm", "the REPL's `!` line, typed on its terminal"),
                           ("caretz_piped", "the REPL's `!` lines from a file"),
                           ("caretz_exec", "`caretz exec` on a terminal")]:
            if key not in tput:
                continue
            name = f"throughput >= 0.97 of script ({short})"
            if tput[key].get("error") or tput["script"].get("error"):
                verdicts.append((name, False, "failed: " + (tput[key]["error"] or
                                                             "script: " + tput["script"]["error"])))
                continue
            q = ratio(tput[key]["mb_s"], s)
            verdicts.append((name, q is not None and q >= 0.97 and tput[key]["complete"],
                             f"{fmt(q, 2)} of script ({fmt(tput[key]['mb_s'])} vs {fmt(s)} MB/s)"
                             + ("" if tput[key]["complete"] else
                                "; output on the terminal not exact: " + tput[key].get("exact", "?"))))
    if det:
        size = f"{det['bytes'] // 1_000_000} MB"
        e = det["caretz_exec"]
        j = det["caretz_json"]
        j.setdefault("error", None)
        if e.get("error"):
            verdicts.append((f"peak RSS < 64 MB at {size}", False, "failed: " + e["error"]))
            verdicts.append((f"whole {size} reached the terminal, all refusals found", False,
                             "failed: " + e["error"]))
            return verdicts
        rss = max(e["hwm_kb"], 0) / 1024
        verdicts.append((f"peak RSS < 64 MB at {size} (caretz process, `exec` on a PTY)",
                         rss < 64, f"{fmt(rss)} MB"))
        ok = e["output_complete"] and e["refusals_in_notice"] == DETECT_CHUNKS and \
            j["refusals_expected_found"] == DETECT_CHUNKS
        verdicts.append((f"whole {size} reached the terminal, all refusals found", ok,
                         f"output {'exact' if e['output_complete'] else 'not exact: ' + e.get('exact', '?')}; "
                         f"refusals {e['refusals_in_notice']}/{DETECT_CHUNKS} in the notice, "
                         f"{j['refusals_expected_found']}/{DETECT_CHUNKS} in --json"
                         + (f" ({j['error']})" if j["error"] else "")))
    return verdicts


def report(res):
    m = res["machine"]
    out = []
    out.append("# Caretz benchmarks")
    out.append("")
    out.append("Generated by `bench/run.sh` (as root; it runs everything below as the unprivileged "
               f"user `{res['user']}`). Do not edit by hand: rerun the bench.")
    out.append("")
    out.append(f"- date: {res['date']}")
    out.append(f"- machine: {m['nproc']} CPUs, {m.get('cpu', '?')}, {m.get('memory', '?')} RAM, "
               f"kernel {m['kernel']}, {m.get('os', '?')}")
    out.append(f"- load average before / after: {res['load_before']} / {res['load_after']} "
               "(other work on the machine shows up as noise, mostly in the p95 columns)")
    out.append(f"- before each part and each throughput and detection run, the bench waits until "
               f"the CPUs are less than {SETTLE_BUSY:.0%} busy over half a second "
               f"({SETTLE_LONGEST} s at most): the kernel frees the namespaces of the sandboxes "
               "before on workers of its own, later, and that work would land in the next "
               "measurement")
    out.append("- a one-shot command's time ends when its process does (`caretz exec` returns "
               "once its command's result is out; its sandbox winds down after that, as bwrap "
               "runs with --die-with-parent); the bench adopts what a command leaves running "
               "and waits, untimed, until it is gone before the next run")
    out.append(f"- Caretz: {res['caretz']} (Release build, commit {res['commit']})")
    for k, v in res["versions"].items():
        out.append(f"- {k}: {v}")
    out.append(f"- wall time of the whole bench: {res['bench_seconds']:.0f} s")
    out.append("")

    out.append("## Targets")
    out.append("")
    out.append("| target | met | measured |")
    out.append("|---|---|---|")
    for name, ok, text in res["targets"]:
        out.append(f"| {name} | {'yes' if ok else ('n/a' if ok is None else '**no**')} | {text} |")
    out.append("")

    st = res.get("starts")
    if st:
        out.append(f"## Starts ({st['n']} runs of each one-shot command, rotating; "
                   f"{st['rounds_repl']} of each REPL start)")
        out.append("")
        out.append("Wall time from spawning to the end (one-shot commands), to `caretz>` on the "
                   "terminal, or to the first bytes of a request at a model API on 127.0.0.1. "
                   "Peak RSS is ru_maxrss through GNU time, the largest of a run's processes, "
                   "over 5 runs.")
        out.append("")
        out.extend(starts_table(st))
        out.append("")
        out.append("Where `caretz exec true` spends its time (medians of each phase, from "
                   "CARETZ_PHASE_TIMES; the phases end where sandbox/phase_times.h's marks are):")
        out.append("")
        out.extend(phases_table(st))
        out.append("")
        out.append("Exact commands:")
        out.append("")
        for key, cmd in st["commands"].items():
            out.append(f"- {key}: `{cmd}`")
        out.append("")

    rows = res["per_command"]
    out.append(f"## Per-command overhead ({res['n']} runs of each command per harness)")
    out.append("")
    out.append("Wall time from starting the command to its end. For the warm session: from "
               "writing the `!` line to reading the line's marker back, where each timed line "
               "directly follows an untimed one, so that it also pays for Caretz's wrap-up of "
               "the command before (end marks, prompt, rendering the capture, detection). "
               "Rounds rotate the harness order, so background load falls on all of them alike.")
    out.append("")
    out.extend(per_command_table(rows))
    out.append("")
    warm = next((r for r in rows if r["key"] == "caretz_warm"), None)
    if warm and warm.get("incidents"):
        out.append("**The warm session ended during the run** and was started again (its row "
                   "keeps the samples of both sessions):")
        out.append("")
        for incident in warm["incidents"]:
            out.append(f"- {incident}")
        out.append("")
    if warm and warm.get("session_start_ms"):
        out.append(f"Starting the warm session (sandbox, supervisor, session shell with the "
                   f"user's rc) and its first command took {warm['session_start_ms']:.1f} ms; "
                   "it is not in the table.")
        out.append("")
    out.append("Exact commands (`CMD` is `true` or `ls /usr`; workspace = cwd):")
    out.append("")
    for r in rows:
        out.append(f"- {r['label']}: `{r['command']}`" + (f" ({r['note']})" if r["note"] else ""))
    out.append("")

    rep = res.get("repositories")
    if rep:
        counts = sorted({r["n"] for r in rep["rows"]}, reverse=True)
        out.append("## Git repositories under the writable roots ("
                   + " or ".join(str(c) for c in counts) + " runs of `true` per session)")
        out.append("")
        out.append("A warm session (as above) started in a workspace of that many folders. Its "
                   "start includes the search for git repositories and an inotify watch on "
                   "every folder; each command is followed by the check for repositories made "
                   "or changed (bench/bench.py `repositories`). "
                   + (f"\"Without the watch\" is a build of {rep['baseline']}, from before it, "
                      "run in alternation with this one. " if rep.get("baseline_ran") else "")
                   + "The inotify watch limit here "
                   f"(fs.inotify.max_user_watches) is {rep.get('inotify_limit')}; folders past "
                   "it get a fanotify mark, up to "
                   f"fs.fanotify.max_user_marks ({rep.get('fanotify_limit', '?')}). Past both, "
                   "each check compares the change time of every folder left, and searches "
                   "again those whose change time moved. Four starts to the prompt and the "
                   "session's start each search the workspace: the first two with no record of "
                   "an earlier search (removed before each), the three after them from the "
                   "record the start before left (sandbox/protection/search_record.h), which lists again "
                   "only the folders whose change time moved; each column is the median of its "
                   "starts (the search's time moves with the kernel's caches). In a workspace of 100,000 folders or more, and in the "
                   "one after it, each start first waits 5 s for the kernel to free the watches "
                   "and marks of the one before.")
        out.append("")
        out.extend(repositories_table(rep))
        out.append("")
        for r in rep["rows"]:
            if r.get("with_said"):
                out.append(f"- {r['folders']:,} folders: Caretz said `{r['with_said']}`")
            for incident in r.get("incidents", []):
                out.append(f"- {r['folders']:,} folders, a session started again: {incident}")
        out.append("")

    tput = res.get("throughput")
    if tput:
        out.append(f"## Throughput ({THROUGHPUT_BYTES // 1_000_000} MB to a terminal, median of "
                   f"{res.get('throughput_reps', res['reps'])} runs)")
        out.append("")
        out.append(f"The command: `{shown(THROUGHPUT_CMD)}` (`LINE` = 99 `=`). `ptyrun` "
                   "(bench/ptyrun.c) owns the terminal, drains it as fast as it can and counts "
                   "the `=` that arrive: \"exact\" means that every one of them did and no "
                   "more (extra text such as debug prints containing `=` would show here).")
        out.append("")
        out.append("| path | MB/s | seconds | / script | / raw PTY | exact | peak RSS of the "
                   "process on the PTY |")
        out.append("|---|---:|---:|---:|---:|---|---:|")
        for key, r in tput.items():
            if r.get("error"):
                out.append(f"| {r['label']} | failed: {r['error']} | | | | | |")
                continue
            out.append(f"| {r['label']} | {fmt(r['mb_s'])} | {fmt(r['wall_s'], 2)} | "
                       f"{fmt(ratio(r['mb_s'], tput['script']['mb_s']), 2)} | "
                       f"{fmt(ratio(r['mb_s'], tput['raw']['mb_s']), 2)} | "
                       f"{r.get('exact', 'yes' if r['complete'] else '**no**')} | "
                       f"{fmt(r['hwm_kb'] / 1024)} MB |")
        out.append("")
        out.append("Exact commands:")
        out.append("")
        for key, r in tput.items():
            out.append(f"- {r['label']}: `{r['command']}`")
        out.append("")

    det = res.get("detection")
    if det:
        out.append(f"## Detection cost ({det['bytes'] // 1_000_000} MB with {det['refusal_lines']} "
                   "refusal lines)")
        out.append("")
        out.append(f"The command: `{det['command']}` (a refusal line after every "
               f"{DETECT_CHUNK_BYTES // 1_000_000} MB, each for "
                   "a different path in the home folder, which the sandbox may not write and the user may "
                   "on the host; the command fails, so each is a write refusal).")
        out.append("")
        raw = det["raw"].get("wall_s")
        script = det["script"].get("wall_s")
        out.append("| run | seconds | / raw | / script | exact output on the terminal | "
                   "refusals found | peak RSS (caretz process) | peak RSS (with its children) |")
        out.append("|---|---:|---:|---:|---|---:|---:|---:|")
        for key in ["raw", "script", "caretz_exec", "caretz_fresh"]:
            r = det[key]
            if r.get("error"):
                out.append(f"| {r['label']} | failed: {r['error']} | | | | | | |")
                continue
            refusals = "-" if key in ("raw", "script") else \
                f"{r['refusals_in_notice']}/{DETECT_CHUNKS}"
            rss = "-" if key in ("raw", "script") else f"{fmt(r['hwm_kb'] / 1024)} MB"
            out.append(f"| {r['label']} | {fmt(r['wall_s'], 2)} | {fmt(ratio(r['wall_s'], raw), 2)}"
                       f" | {fmt(ratio(r['wall_s'], script), 2)}"
                       f" | {r.get('exact', 'yes' if r['output_complete'] else '**no**')} | {refusals} | "
                       f"{rss} | {fmt(r['maxrss_kb'] / 1024)} MB |")
        j = det["caretz_json"]
        out.append(f"| {j['label']} | {fmt(j['wall_s'], 2)} | {fmt(ratio(j['wall_s'], raw), 2)} | "
                   f"{fmt(ratio(j['wall_s'], script), 2)} | (not printed with --json; `output` "
                   f"holds {j['output_chars']} characters: head and tail) | "
                   f"{j['refusals_expected_found']}/{DETECT_CHUNKS} | "
                   f"{fmt(j['hwm_kb'] / 1024)} MB | - |"
                   + (f" failed: {j['error']}" if j.get("error") else ""))
        out.append("")
        out.append("\"refusals found\" on a PTY counts the paths in Caretz's stderr notice "
                   "(`caretz: the sandbox refused write ...`); with `--json`, the `refusals` "
                   "list. Peak RSS of the caretz process is its VmHWM sampled every 10 ms; "
                   "\"with its children\" is ru_maxrss from wait4 (the largest of caretz, bwrap, "
                   "the supervisor and the command's processes).")
        out.append("")
        out.append("Exact commands:")
        out.append("")
        for key in ["raw", "script", "caretz_exec", "caretz_fresh", "caretz_json"]:
            out.append(f"- {det[key]['label']}: `{det[key]['command']}`")
        out.append("")
    cmp = res.get("detection_baseline")
    if cmp:
        out.append(f"## Detection cost against a baseline build ({DETECT_CHUNKS * DETECT_CHUNK_BYTES // 1_000_000} MB with "
                   f"{DETECT_CHUNKS} refusal lines)")
        out.append("")
        out.append(f"The detection command (`{shown(DETECT_CMD)}`) through the baseline build "
                   f"(`{cmp['baseline']}`, commit {cmp['baseline_commit']}) and this one "
                   f"(commit {cmp['this_commit']}), alternating, {cmp['reps']} runs each; "
                   "seconds are medians, every run's time follows in brackets.")
        out.append("")
        out.append("| run | baseline s | this s | this / baseline | refusals found (baseline, this) |")
        out.append("|---|---:|---:|---:|---|")
        for row in cmp["rows"]:
            if row.get("error") or not row["baseline"] or not row["this"]:
                out.append(f"| Caretz {row['label']} | failed: {row.get('error')} | | | |")
                continue
            b = statistics.median(row["baseline"])
            t = statistics.median(row["this"])
            runs = lambda v: ", ".join(fmt(x, 2) for x in v)
            out.append(f"| Caretz {row['label']} | {fmt(b, 2)} [{runs(row['baseline'])}] | "
                       f"{fmt(t, 2)} [{runs(row['this'])}] | {fmt(ratio(t, b), 3)} | "
                       f"{row['refusals'].get('baseline', 0)}/{DETECT_CHUNKS}, "
                       f"{row['refusals'].get('this', 0)}/{DETECT_CHUNKS} |")
        out.append("")
    if res.get("notes"):
        out.append("## Notes")
        out.append("")
        out.extend(res["notes"])
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--caretz")
    ap.add_argument("--ptyrun")
    ap.add_argument("--peers", help="bench/peers/node_modules")
    ap.add_argument("--workspace")
    ap.add_argument("--out", required=True)
    ap.add_argument("--render", metavar="RESULTS_JSON",
                    help="only write RESULTS.md again from an earlier results.json (and --notes)")
    ap.add_argument("--commit", default="?")
    ap.add_argument("--notes", help="a file whose lines go under ## Notes")
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--throughput-reps", type=int, default=7,
                    help="rounds of the throughput runs (each run moves with the machine's load "
                         "by up to 20%% here: the median of more rounds is steadier)")
    ap.add_argument("--skip", default="",
                    help="comma-separated: starts,percommand,throughput,detection,baseline,"
                    "repositories")
    ap.add_argument("--quick", action="store_true", help="small sizes, to try the bench out")
    ap.add_argument("--baseline-caretz", help="another Caretz build whose detection cost is "
                    "measured beside this one's, in the same run")
    ap.add_argument("--baseline-commit", default="?")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            res = json.load(f)
        if args.notes and os.path.exists(args.notes):
            with open(args.notes) as f:
                res["notes"] = f.read().rstrip("\n").splitlines()
        if res.get("detection"):
            # The sizes the run used, for the texts that name them.
            det = res["detection"]
            configure(res.get("throughput_bytes", THROUGHPUT_BYTES), det["refusal_lines"],
                      det["bytes"] // det["refusal_lines"])
        res["targets"] = targets(res["per_command"], res.get("throughput"), res.get("detection"),
                                 res.get("repositories"), res.get("starts"))
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "RESULTS.md"), "w") as f:
            f.write(report(res) + "\n")
        return
    for name in ["caretz", "ptyrun", "peers", "workspace"]:
        if not getattr(args, name):
            ap.error(f"--{name} is needed")
    if args.quick:
        configure(20_000_000, 10, 1_000_000)
    skip = set(filter(None, args.skip.split(",")))
    adopt_orphans()
    began = time.time()
    os.chdir(args.workspace)
    env = dict(os.environ)
    tmp = tempfile.mkdtemp(prefix="caretz-bench.")
    res = {"date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
           "machine": machine(), "load_before": loadavg(), "user": os.environ.get("USER", "?"),
           "caretz": args.caretz, "commit": args.commit, "n": args.n, "reps": args.reps,
           "throughput_reps": args.throughput_reps,
           "throughput_bytes": THROUGHPUT_BYTES}

    bin_dir = os.path.join(args.peers, ".bin")
    codex_npm = os.path.join(bin_dir, "codex")
    codex_native = os.path.join(args.peers, "@openai/codex-linux-x64/vendor/"
                                "x86_64-unknown-linux-musl/bin/codex")
    srt = os.path.join(bin_dir, "srt")
    srt_settings = os.path.join(tmp, "srt-settings.json")
    with open(srt_settings, "w") as f:
        json.dump({"network": {"allowedDomains": [], "deniedDomains": []},
                   "filesystem": {"denyRead": [], "allowWrite": [args.workspace],
                                  "denyWrite": []}}, f)
    ws = args.workspace
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    codex_args = ["sandbox", "-c", 'sandbox_mode="workspace-write"', "--", "/bin/bash", "-c"]
    res["versions"] = {
        "bwrap": version([bwrap, "--version"], env),
        "codex": version([codex_native if os.path.exists(codex_native) else codex_npm,
                          "--version"], env),
        "srt": version([srt, "--version"], env),
        "node": version(["node", "--version"], env),
        "bash": version(["/bin/bash", "--version"], env),
        "script": version(["/usr/bin/script", "--version"], env),
    }

    harnesses = [
        WarmSession(args.caretz, env),
        ProcessHarness("caretz_fresh", "Caretz `exec --no-session` (fresh sandbox per command)",
                       lambda c: [args.caretz, "exec", "--no-session", c], env),
        ProcessHarness("caretz_exec", "Caretz `exec` (session mode, one session per command)",
                       lambda c: [args.caretz, "exec", c], env),
        ProcessHarness("codex_npm", "`codex sandbox` (the npm `codex` launcher)",
                       lambda c: [codex_npm] + codex_args + [c], env,
                       "node starts, then the native binary"),
        ProcessHarness("codex_native", "`codex sandbox` (native binary from the npm package)",
                       lambda c: [codex_native] + codex_args + [c], env),
        ProcessHarness("srt", "`srt -c` (sandbox-runtime)",
                       lambda c: [srt, "-s", srt_settings, "-c", c], env,
                       f"settings: {json.dumps(json.load(open(srt_settings)))}"),
        ProcessHarness("bwrap", "bare `bwrap` start, same policy",
                       lambda c: [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                  "--tmpfs", "/tmp", "--bind", ws, ws, "--chdir", ws,
                                  "--unshare-all", "--new-session", "--die-with-parent", "--",
                                  "/bin/bash", "-c", c], env),
        ProcessHarness("none", "no sandbox: `bash -c CMD`", lambda c: ["/bin/bash", "-c", c], env),
    ]
    if "starts" not in skip:
        res["starts"] = starts(args, env, tmp, max(10, args.n // 2))
    if "percommand" not in skip:
        res["per_command"] = per_command(harnesses, args.n, args.workspace)
    else:
        res["per_command"] = []
    if "throughput" not in skip:
        res["throughput"] = throughput(args, env, tmp)
    if "detection" not in skip:
        res["detection"] = detection(args, env, tmp)
    if args.baseline_caretz and "baseline" not in skip:
        res["detection_baseline"] = detection_against_baseline(args, env, tmp)
    if "repositories" not in skip:
        res["repositories"] = repositories(args, env, [2_000, 30_000] if args.quick
                                           else [5_000, 300_000])
    res["targets"] = targets(res["per_command"], res.get("throughput"), res.get("detection"),
                             res.get("repositories"), res.get("starts"))
    res["load_after"] = loadavg()
    res["bench_seconds"] = time.time() - began
    if args.notes and os.path.exists(args.notes):
        with open(args.notes) as f:
            res["notes"] = f.read().rstrip("\n").splitlines()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, "RESULTS.md"), "w") as f:
        f.write(report(res) + "\n")
    shutil.rmtree(tmp, ignore_errors=True)
    missed = [name for name, ok, _ in res["targets"] if ok is False]
    if missed:
        log("targets missed: " + "; ".join(missed))
        sys.exit(1)


if __name__ == "__main__":
    main()
