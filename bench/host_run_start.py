#!/usr/bin/env python3
"""What the table of what the host runs later adds to a start (bench/NOTES.md).

Run as an unprivileged user whose home is a new user's (bench/run.sh's caretz-bench), with two
installed builds of Caretz: one with the table (--new) and one from just before it (--old). In three workspaces (an empty
folder, the home folder itself, and a folder of --folders folders, 300,000 by default, searched
from its record), it times `caretz exec true` per command (--no-session) and in session mode,
the two builds alternating run by run so that the machine's drift falls on both alike; then the
warm per-command median (`!true` in a running REPL, bench.py's WarmSession) of both in the empty
folder, and prints the medians and their ratio as a Markdown table.

  runuser -u caretz-bench -- bench/host_run_start.py --new /opt/a/bin/caretz \
      --old /opt/b/bin/caretz [-n 21] [--folders 300000]
"""
import argparse
import os
import statistics
import subprocess
import time

from bench import WarmSession, make_folders


def timed(argv, cwd):
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} in {cwd} exited {done.returncode}")
    return elapsed


def measure(builds, flags, cwd, n):
    """The median of `n` runs of each build's `caretz exec FLAGS true` in `cwd`, in ms."""
    times = {name: [] for name in builds}
    for name, binary in builds.items():  # warm-up: caches, and the search's record
        timed([binary, "exec", *flags, "true"], cwd)
    for _ in range(n):
        for name, binary in builds.items():
            times[name].append(timed([binary, "exec", *flags, "true"], cwd))
    return {name: statistics.median(t) for name, t in times.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--new", required=True, help="caretz with the table")
    parser.add_argument("--old", required=True, help="caretz from before it")
    parser.add_argument("-n", type=int, default=21)
    parser.add_argument("--folders", type=int, default=300_000)
    args = parser.parse_args()
    home = os.path.expanduser("~")
    # Outside the home, so that the home workspace holds only what a user's home holds.
    base = f"/var/tmp/caretz-host-run-{os.getuid()}"
    empty = os.path.join(base, "empty")
    many = os.path.join(base, f"folders-{args.folders}")
    os.makedirs(empty, exist_ok=True)
    if not os.path.isdir(many):  # made once: the bench's runs then start from its record
        make_folders(many, args.folders)
    builds = {"with the table": args.new, "without": args.old}
    rows = []
    for label, cwd, n in (("an empty folder", empty, args.n), ("the home folder", home, args.n),
                          (f"{args.folders:,} folders (from the record)", many,
                           max(5, args.n // 4))):
        for mode in ("per command", "session"):
            m = measure(builds, ["--no-session"] if mode == "per command" else [], cwd, n)
            rows.append((label, mode, n, m["with the table"], m["without"]))
    warm = {name: WarmSession(binary, dict(os.environ), cwd=empty)
            for name, binary in builds.items()}
    for session in warm.values():
        session.start()
    warm_times = {name: [] for name in builds}
    for _ in range(args.n * 10):
        for name, session in warm.items():
            warm_times[name].append(session.time("true") * 1000)
    for session in warm.values():
        session.stop()
    rows.append(("an empty folder", "warm `!true` in a session", args.n * 10,
                 statistics.median(warm_times["with the table"]),
                 statistics.median(warm_times["without"])))
    print("| workspace | `caretz exec true` | runs | with the table (ms) | without (ms) | ratio |")
    print("|---|---|---|---|---|---|")
    for label, mode, n, new, old in rows:
        print(f"| {label} | {mode} | {n} | {new:.2f} | {old:.2f} | {new / old:.3f} |")


if __name__ == "__main__":
    main()
