#!/usr/bin/env python3
"""What keeping a long session within the model's context window costs (bench/NOTES.md).

Run as an unprivileged user (bench/run.sh's caretz-bench, or any user with user namespaces) with
an installed Caretz. Against the end-to-end tests' model server (tests/e2e/model_server.py) on
127.0.0.1, one `caretz --print` turn writes a fact, then --dumps commands of about 110 KB of log
each, then answers. Three ways, alternating run by run so the machine's drift falls on all alike:

- unbounded: the server has no window and Caretz knows none, so nothing is compacted (each
  result is still bounded to 16 KiB);
- known: the server's window is --window tokens and model.context_window says so: Caretz
  compacts before the window fills and the server refuses nothing;
- refused: the same window, unknown to Caretz until the server refuses a request (HTTP 400 as
  OpenAI words it); Caretz compacts and sends that request again.

It prints, as a Markdown table: each way's median wall time and its ratio to unbounded, the
largest request and the last request sent (tokens as the server counts them: 4 bytes each), the
requests the server refused, the summaries asked for, and the time from a refused request to
the same request sent again compacted (Caretz's compaction and the summary's round trip to a
server that answers at once).

  runuser -u caretz-bench -- bench/context.py --caretz /opt/x/bin/caretz [-n 5] [--dumps 6]
      [--window 8000]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e",
                      "model_server.py")
DUMP = "seq -f 'checkpoint %g complete on the replica' 3000"
FACT = "the incident is INC-7741 and the broken replica is db2-east"


def script(dumps):
    turns = [{"tool_calls": [{"name": "shell", "arguments": {"command": f"{DUMP}; echo DUMP-{i}"}}]}
             for i in range(dumps)]
    turns.append({"text": "READ"})
    return {"turns": turns,
            "summaries": [{"text": f"SUMMARY: {FACT}; the dumps showed checkpoints."}] * 4}


def run_once(caretz, way, dumps, window, tmp):
    folder = tempfile.mkdtemp(dir=tmp)
    with open(os.path.join(folder, "script.json"), "w") as f:
        json.dump(script(dumps), f)
    config = os.path.join(folder, "config", "caretz")
    os.makedirs(config)
    if way == "known":
        with open(os.path.join(config, "config.json"), "w") as f:
            json.dump({"model": {"context_window": window}}, f)
    env = dict(os.environ, MODEL_SERVER_CONTEXT=str(window if way != "unbounded" else 0))
    port, requests = os.path.join(folder, "port"), os.path.join(folder, "requests.jsonl")
    server = subprocess.Popen(["python3", SERVER, "serve", os.path.join(folder, "script.json"),
                               port, requests], env=env)
    try:
        while not os.path.exists(port):
            time.sleep(0.02)
        with open(port) as f:
            url = f"http://127.0.0.1:{f.read()}/v1"
        env = dict(os.environ, CARETZ_BASE_URL=url, CARETZ_MODEL="bench-model",
                   CARETZ_API_KEY="bench", XDG_CONFIG_HOME=os.path.join(folder, "config"),
                   XDG_STATE_HOME=os.path.join(folder, "state"))
        ws = os.path.join(folder, "ws")
        os.mkdir(ws)
        start = time.perf_counter()
        done = subprocess.run([caretz, "--print", "-p", f"Remember: {FACT}. Then dump the log."],
                              cwd=ws, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        wall = (time.perf_counter() - start) * 1000
    finally:
        server.terminate()
        server.wait()
    if done.returncode != 0 or done.stdout.strip() != "READ":
        raise SystemExit(f"{way}: caretz exited {done.returncode} with {done.stdout!r}")
    with open(requests) as f:
        posts = [json.loads(line) for line in f if '"body"' in line]
    if FACT not in json.dumps(posts[-1]["body"]) and "INC-7741" not in json.dumps(posts[-1]["body"]):
        raise SystemExit(f"{way}: the fact did not reach the last request")
    # From each refused request to the next request that is neither refused nor a summary.
    compacting = 0.0
    for i, p in enumerate(posts):
        if p["status"] != 400:
            continue
        after = next((q for q in posts[i + 1:] if q["status"] != 400 and not q["summary"]), None)
        if after:
            compacting += (after["time"] - p["time"]) * 1000
    return {"wall": wall, "largest": max(p["tokens"] for p in posts),
            "last": posts[-1]["tokens"], "refused": sum(p["status"] == 400 for p in posts),
            "summaries": sum(p["summary"] for p in posts), "compacting": compacting}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--caretz", required=True)
    parser.add_argument("-n", type=int, default=5)
    parser.add_argument("--dumps", type=int, default=6)
    parser.add_argument("--window", type=int, default=8000)
    args = parser.parse_args()
    ways = ["unbounded", "known", "refused"]
    results = {w: [] for w in ways}
    with tempfile.TemporaryDirectory() as tmp:
        for w in ways:  # warm-up
            run_once(args.caretz, w, args.dumps, args.window, tmp)
        for _ in range(args.n):
            for w in ways:
                results[w].append(run_once(args.caretz, w, args.dumps, args.window, tmp))
    base = statistics.median(r["wall"] for r in results["unbounded"])
    print(f"{args.dumps} dumps of ~110 KB in one turn, window {args.window} tokens, "
          f"median of {args.n} runs each\n")
    print("| way | wall ms | ratio | largest request | last request | refused | summaries |"
          " compacting ms |")
    print("|---|---|---|---|---|---|---|---|")
    for w in ways:
        rs = results[w]
        wall = statistics.median(r["wall"] for r in rs)
        print(f"| {w} | {wall:.0f} | {wall / base:.2f} | "
              f"{statistics.median(r['largest'] for r in rs):.0f} | "
              f"{statistics.median(r['last'] for r in rs):.0f} | "
              f"{statistics.median(r['refused'] for r in rs):.0f} | "
              f"{statistics.median(r['summaries'] for r in rs):.0f} | "
              f"{statistics.median(r['compacting'] for r in rs):.1f} |")


if __name__ == "__main__":
    main()
