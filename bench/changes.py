#!/usr/bin/env python3
"""What recording the sandboxed attempt's changes for the offer costs (bench/NOTES.md).

Run as an unprivileged user (bench/run.sh's caretz-bench) with two installed builds of Caretz:
one that records (--new) and one from just before (--old). Each row alternates the two builds
run by run, so the machine's drift falls on both alike, and prints their medians and ratio:

- the warm per-command median (`!true` in a running REPL, bench.py's WarmSession), with
  --ask-sandbox-off (where the new build records) and without (where it does not);
- a command writing 100,000 files into a folder the REPL watches, with --ask-sandbox-off,
  timed with the `true` after it, whose time holds the write's wrap-up (the check that reads
  the events, and the list);
- a one-shot `caretz exec --ask-sandbox-off true` in an empty folder and in a tree of
  --folders folders (the one-shot exec now watches the folders when an offer can follow).

  runuser -u caretz-bench -- bench/changes.py --new /opt/a/bin/caretz --old /opt/b/bin/caretz \
      [-n 21] [--files 100000] [--folders 300000]
"""
import argparse
import os
import statistics
import tempfile

from bench import WarmSession, make_folders
from host_run_start import measure

# One line: the REPL takes the command as one `!` line.
WRITE = "python3 -c '[open(\"{folder}/f%d\" % i, \"w\").write(\"x\") for i in range({files})]'"


def wrapper(folder, binary, flags):
    """A script that starts `binary` with `flags`: WarmSession starts Caretz without arguments."""
    path = os.path.join(folder, f"caretz-{abs(hash((binary, *flags)))}")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nexec {binary} {' '.join(flags)} \"$@\"\n")
    os.chmod(path, 0o755)
    return path


def start_sessions(builds, flags, cwd, tmp):
    sessions = {name: WarmSession(wrapper(tmp, binary, flags), dict(os.environ), cwd=cwd)
                for name, binary in builds.items()}
    for s in sessions.values():
        s.start()
    return sessions


def warm(builds, flags, cwd, runs, tmp):
    sessions = start_sessions(builds, flags, cwd, tmp)
    times = {name: [] for name in builds}
    try:
        for _ in range(runs):
            for name, s in sessions.items():
                times[name].append(s.time("true") * 1000)
    finally:
        for s in sessions.values():
            s.stop()
    return {name: statistics.median(t) for name, t in times.items()}


def many_files(builds, cwd, files, reps, tmp):
    sessions = start_sessions(builds, ["--ask-sandbox-off"], cwd, tmp)
    times = {name: [] for name in builds}
    try:
        for _ in range(reps):
            for name, s in sessions.items():
                folder = f"w-{name.replace(' ', '-')}"
                # Untimed: a fresh folder, watched by the time the write starts.
                s.run(f"rm -rf {folder} && mkdir {folder}", timeout=120)
                s.run("true")
                write, _ = s.run(WRITE.format(files=files, folder=folder), timeout=300)
                after, _ = s.run("true", timeout=120)
                times[name].append((write + after) * 1000)
                s.run(f"rm -rf {folder}", timeout=120)
    finally:
        for s in sessions.values():
            s.stop()
    return {name: statistics.median(t) for name, t in times.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--new", required=True, help="caretz that records the changes")
    parser.add_argument("--old", required=True, help="caretz from before")
    parser.add_argument("-n", type=int, default=21)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--folders", type=int, default=300_000)
    args = parser.parse_args()
    base = f"/var/tmp/caretz-changes-{os.getuid()}"
    empty = os.path.join(base, "empty")
    os.makedirs(empty, exist_ok=True)
    builds = {"recording": args.new, "before": args.old}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for flags, label in ((["--ask-sandbox-off"], "warm `!true`, --ask-sandbox-off"),
                             ([], "warm `!true`, without --ask-sandbox-off")):
            m = warm(builds, flags, empty, args.n * 10, tmp)
            rows.append((label, "an empty folder", args.n * 10, m))
        m = many_files(builds, empty, args.files, max(3, args.n // 4), tmp)
        rows.append((f"`!` writing {args.files:,} files, and the next `true`, --ask-sandbox-off",
                     "an empty folder", max(3, args.n // 4), m))
    exec_flags = ["--ask-sandbox-off"]
    rows.append(("`caretz exec --ask-sandbox-off true`", "an empty folder", args.n,
                 measure(builds, exec_flags, empty, args.n)))
    if args.folders:
        many = os.path.join(base, f"folders-{args.folders}")
        if not os.path.isdir(many):  # made once: later runs start from its search record
            make_folders(many, args.folders)
        rows.append(("`caretz exec --ask-sandbox-off true`", f"{args.folders:,} folders",
                     max(5, args.n // 4), measure(builds, exec_flags, many, max(5, args.n // 4))))
    print("| what | workspace | runs | recording (ms) | before (ms) | ratio |")
    print("|---|---|---|---|---|---|")
    for label, where, n, m in rows:
        print(f"| {label} | {where} | {n} | {m['recording']:.2f} | {m['before']:.2f} | "
              f"{m['recording'] / m['before']:.3f} |")


if __name__ == "__main__":
    main()
