#!/usr/bin/env python3
"""What the protection of what the host runs later adds to a start (bench/NOTES.md).

Run as an unprivileged user (bench/run.sh's caretz-bench), with two installed builds of Caretz:
the one to measure (--new) and one from just before a change to the protection (--old). In four
workspaces (an empty folder, the home folder itself, made a used home of about --dot-entries
entries whose names start with a dot, 50 by default, and a folder of --folders folders, 300,000
by default, searched from its record and searched afresh, the record removed before each run;
--workspaces picks some), it times `caretz exec true` per command (--no-session) and in session
mode, the two builds alternating run by run so that the machine's drift falls on both alike;
then, with the empty folder, the warm per-command median (`!true` in a running REPL, bench.py's
WarmSession) of both there, and prints the medians and their ratio as a Markdown table.

  runuser -u caretz-bench -- bench/host_run_start.py --new /opt/a/bin/caretz \
      --old /opt/b/bin/caretz [-n 21] [--folders 300000] [--dot-entries 50] \
      [--workspaces empty,home,record,first]
"""
import argparse
import os
import statistics
import subprocess
import time

from bench import WarmSession, forget_search_records, make_folders


def timed(argv, cwd, env):
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} in {cwd} exited {done.returncode}")
    return elapsed


def state_home(name):
    """Each build's own $XDG_STATE_HOME, in the home (hidden from the sandbox like the default):
    the builds' search records may differ in format and must not replace each other's."""
    return os.path.expanduser(f"~/.local/state-bench-{name}")


def measure(builds, flags, cwd, n, before=lambda name: None):
    """The median of `n` runs of each build's `caretz exec FLAGS true` in `cwd`, in ms;
    `before(name)` runs before each one, untimed."""
    times = {name: [] for name in builds}
    envs = {name: dict(os.environ, XDG_STATE_HOME=state_home(name)) for name in builds}
    for name, binary in builds.items():  # warm-up: caches, and the search's record
        before(name)
        timed([binary, "exec", *flags, "true"], cwd, envs[name])
    for _ in range(n):
        for name, binary in builds.items():
            before(name)
            times[name].append(timed([binary, "exec", *flags, "true"], cwd, envs[name]))
    return {name: statistics.median(t) for name, t in times.items()}


def forget_build_records(name):
    """Removes the search records of the build `name`, so that its next start searches every
    folder afresh."""
    forget_search_records(dict(os.environ, XDG_STATE_HOME=state_home(name)))


# The folders and files of a home in use, beside those a new user's has.
USED_HOME = [".docker/cli-plugins", ".ansible/plugins", ".ipython/profile_default/startup",
             ".gradle/init.d", ".m2", ".cache/pip", ".npm/_cacache", ".cargo/bin", ".rustup",
             ".go", ".vim/pack", ".config/i3", ".config/nvim", ".local/share/bash-completion",
             ".local/share/dbus-1", ".kube-free", ".terraform.d/plugins", ".pyenv", ".nvm",
             ".java", ".ssh-free", ".vscode/extensions", ".mozilla-free", ".thunderbird"]
USED_FILES = [".inputrc", ".sqliterc", ".wgetrc", ".curlrc", ".gitconfig", ".psqlrc",
              ".tmux.conf", ".vimrc", ".zshrc", ".bash_history", ".lesshst", ".python_history",
              ".selected_editor", ".sudo_as_admin_successful", ".wget-hsts", ".viminfo",
              ".gitignore_global", ".editorconfig", ".npmrc-free", ".yarnrc", ".node_repl_history"]


def make_used_home(home, entries):
    """Fills `home` with the tools' folders and dotfiles of one in use, then numbered ones, until
    it holds `entries` entries whose names start with a dot; returns how many it holds."""
    for folder in USED_HOME:
        os.makedirs(os.path.join(home, folder), exist_ok=True)
        with open(os.path.join(home, folder, "settings"), "w") as f:
            f.write("x\n")
    for name in USED_FILES:
        with open(os.path.join(home, name), "a") as f:
            f.write("")
    dots = lambda: [e for e in os.listdir(home) if e.startswith(".")]
    i = 0
    while len(dots()) < entries:
        os.makedirs(os.path.join(home, f".tool{i:02d}"), exist_ok=True)
        i += 1
    return len(dots())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--new", required=True, help="caretz with the table")
    parser.add_argument("--old", required=True, help="caretz from before it")
    parser.add_argument("-n", type=int, default=21)
    parser.add_argument("--folders", type=int, default=300_000)
    parser.add_argument("--dot-entries", type=int, default=50)
    parser.add_argument("--workspaces", default="empty,home,record,first",
                        help="which rows: empty, home, record (the folders, searched from the "
                             "record), first (the folders' first search, the record removed "
                             "before each run)")
    args = parser.parse_args()
    chosen = args.workspaces.split(",")
    home = os.path.expanduser("~")
    # Outside the home, so that the home workspace holds only what a user's home holds.
    base = f"/var/tmp/caretz-host-run-{os.getuid()}"
    empty = os.path.join(base, "empty")
    many = os.path.join(base, f"folders-{args.folders}")
    os.makedirs(empty, exist_ok=True)
    if not os.path.isdir(many):  # made once: the bench's runs then start from its record
        make_folders(many, args.folders)
    dots = make_used_home(home, args.dot_entries)
    builds = {"new": args.new, "old": args.old}
    rows = []
    workspaces = (("empty", "an empty folder", empty, args.n, lambda name: None),
                  ("home", f"a used home ({dots} dot entries)", home, args.n, lambda name: None),
                  ("record", f"{args.folders:,} folders (from the record)", many,
                   max(5, args.n // 4), lambda name: None),
                  ("first", f"{args.folders:,} folders (first search)", many,
                   max(5, args.n // 4), forget_build_records))
    for key, label, cwd, n, before in workspaces:
        if key not in chosen:
            continue
        for mode in ("per command", "session"):
            m = measure(builds, ["--no-session"] if mode == "per command" else [], cwd, n, before)
            rows.append((label, mode, n, m["new"], m["old"]))
    if "empty" in chosen:
        warm = {name: WarmSession(binary, dict(os.environ, XDG_STATE_HOME=state_home(name)),
                                  cwd=empty)
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
                     statistics.median(warm_times["new"]), statistics.median(warm_times["old"])))
    print("| workspace | `caretz exec true` | runs | new (ms) | old (ms) | ratio |")
    print("|---|---|---|---|---|---|")
    for label, mode, n, new, old in rows:
        print(f"| {label} | {mode} | {n} | {new:.2f} | {old:.2f} | {new / old:.3f} |")


if __name__ == "__main__":
    main()
