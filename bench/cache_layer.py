#!/usr/bin/python3
"""What the private cache layer (sandbox/cache_layer.h) costs, side by side in one run.

Runs as an unprivileged user, with one Caretz build, in homes made inside that user's own home
(so the sandbox rebuilds them and binds their entries back, as it does a real home's). Two
homes differ only in their caches: one with ~/.cache, ~/.npm and ~/.cargo/registry (three overlays mounted before each
sandbox), one with none (no overlay, so no user namespace of the layer's). Measures, in rounds
that alternate between the homes:
  1. a one-shot `caretz exec true` (the layer is made at every sandbox's start);
  2. the warm per-command median of `true` in a session (bench.py's WarmSession), which the
     layer should not touch: it is made once, when the session's sandbox starts;
  3. `go build` of a small program whose source changes every round, inside the sandbox
     (`caretz exec`, reading Go's warm build cache through the overlay) against the same build
     on the host.
A third home, the layer's with `"sandbox": {"cache_layer": false}` in its config, measures the
one-shot exec with the layer switched off in the same home; the other two homes' config files
turn it on, so the three homes' configuration folders are alike. With --before PATH (an
earlier Caretz build), the one-shot exec of that build runs in the same rounds, in all three
homes, so that the two builds' figures come from one run on one machine's load.
Prints one JSON object. Usage: cache_layer.py --caretz PATH [--before PATH] [-n N]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the timing helpers and the warm session of the main bench)


def make_home(root, name, caches, layer=True):
    """A home in the bench user's own one, as the sandbox sees a real home: rebuilt, each of its
    entries bound back. Every home has the same config file (which makes ~/.config rebuilt),
    differing only in sandbox.cache_layer."""
    home = os.path.join(root, name)
    os.makedirs(os.path.join(home, "ws"))
    if caches:
        for folder in (".cache/go-build", ".npm/_cacache", ".cargo/registry"):
            os.makedirs(os.path.join(home, folder))
    os.makedirs(os.path.join(home, ".config", "caretz"))
    with open(os.path.join(home, ".config", "caretz", "config.json"), "w") as f:
        json.dump({"sandbox": {"cache_layer": layer}}, f)
    return home


def env_for(home):
    return {"HOME": home, "USER": os.environ.get("USER", "user"), "SHELL": "/bin/bash",
            "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm-256color"}


def go_project(path, round_number):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "go.mod"), "w") as f:
        f.write("module benchgo\ngo 1.19\n")
    with open(os.path.join(path, "main.go"), "w") as f:
        f.write('package main\nimport ("fmt"; "strings")\n'
                f'func main() {{ fmt.Println(strings.Repeat("x", {round_number})) }}\n')


def median_ms(values):
    return statistics.median(values) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--caretz", required=True)
    ap.add_argument("--before", help="an earlier Caretz build, measured alongside")
    ap.add_argument("-n", type=int, default=60)
    ap.add_argument("--builds", type=int, default=7)
    ap.add_argument("--settle", type=float, default=bench.SETTLE_LONGEST,
                    help="the longest wait for a quiet machine before each part, in seconds")
    args = ap.parse_args()
    bench.SETTLE_LONGEST = args.settle
    root = tempfile.mkdtemp(prefix="caretz-cache-bench-", dir=os.path.expanduser("~"))
    homes = {"layer": make_home(root, "layer", True), "plain": make_home(root, "plain", False),
             "off": make_home(root, "off", True, layer=False)}
    envs = {k: env_for(h) for k, h in homes.items()}
    # Go's build cache of the layer home is warm, from a build on the host.
    go_project(os.path.join(homes["layer"], "ws"), 0)
    subprocess.run(["go", "build", "-buildvcs=false", "-o", "/dev/null", "."],
                   cwd=os.path.join(homes["layer"], "ws"), env=envs["layer"], check=True)

    # (name, build, home), each round in another order; the name tells the builds apart even
    # when they are one file.
    runs = [(key, args.caretz, key) for key in ("layer", "plain", "off")]
    if args.before:
        runs += [("before " + key, args.before, key) for key in ("layer", "plain", "off")]
    exec_times = {run: [] for run in runs}
    bench.settle("one-shot caretz exec true")
    for i in range(args.n):
        for name, caretz, key in runs[i % len(runs):] + runs[:i % len(runs)]:
            os.chdir(os.path.join(homes[key], "ws"))
            t, status = bench.spawn_timed([caretz, "exec", "true"], envs[key])
            if status != 0:
                raise SystemExit(f"{caretz} exec true failed in the {key} home ({status})")
            exec_times[(name, caretz, key)].append(t)

    warm_homes = ("layer", "plain")
    warm_times = {k: [] for k in warm_homes}
    sessions = {k: bench.WarmSession(args.caretz, envs[k], cwd=os.path.join(homes[k], "ws"))
                for k in warm_homes}
    for s in sessions.values():
        s.start()
    bench.settle("warm per-command true")
    for i in range(args.n * 5):
        for key in (("layer", "plain") if i % 2 == 0 else ("plain", "layer")):
            sessions[key].run("true")  # untimed: the timed one includes a full cycle
            t, _ = sessions[key].run("true")
            warm_times[key].append(t)
    for s in sessions.values():
        s.stop()

    host_ws = os.path.join(homes["layer"], "host-ws")
    sandbox_ws = os.path.join(homes["layer"], "ws")
    build = [shutil.which("go"), "build", "-buildvcs=false", "-o", "app", "."]
    build_times = {"host": [], "sandbox": []}
    bench.settle("go build, host against sandbox")
    for i in range(1, args.builds + 1):
        go_project(host_ws, i)
        go_project(sandbox_ws, i)
        os.chdir(host_ws)
        t, status = bench.spawn_timed(build, envs["layer"])
        build_times["host"].append(t)
        os.chdir(sandbox_ws)
        t2, status2 = bench.spawn_timed([args.caretz, "exec", "go " + " ".join(build[1:])],
                                        envs["layer"])
        if status or status2:
            raise SystemExit(f"go build failed (host {status}, sandbox {status2})")
        build_times["sandbox"].append(t2)
    # The overlays leave their work folders without permissions: Caretz's own clear opens them.
    for key in ("layer", "plain"):
        subprocess.run([args.caretz, "cache", "clear"], cwd=os.path.join(homes[key], "ws"),
                       env=envs[key], stdout=subprocess.DEVNULL, check=True)
    os.chdir("/")
    shutil.rmtree(root, ignore_errors=True)

    exec_ms = {name: median_ms(v) for (name, _, _), v in exec_times.items()}
    result = {
        "exec_true_ms": exec_ms,
        "warm_true_ms": {k: median_ms(v) for k, v in warm_times.items()},
        "go_build_ms": {k: median_ms(v) for k, v in build_times.items()},
        "n": {"exec": args.n, "warm": args.n * 5, "builds": args.builds},
        "load": bench.loadavg(),
    }
    result["ratios"] = {
        "exec_true_layer_over_plain": exec_ms["layer"] / exec_ms["plain"],
        "exec_true_layer_over_off": exec_ms["layer"] / exec_ms["off"],
        "warm_true_layer_over_plain": result["warm_true_ms"]["layer"] / result["warm_true_ms"]["plain"],
        "go_build_sandbox_over_host": result["go_build_ms"]["sandbox"] / result["go_build_ms"]["host"],
    }
    if args.before:
        result["ratios"]["before_exec_true_layer_over_plain"] = (
            exec_ms["before layer"] / exec_ms["before plain"])
        result["ratios"]["before_exec_true_layer_over_off"] = (
            exec_ms["before layer"] / exec_ms["before off"])
        result["ratios"]["exec_true_layer_after_over_before"] = (
            exec_ms["layer"] / exec_ms["before layer"])
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
