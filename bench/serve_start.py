"""Serve start: how long `kg serve` takes to give each kind of first answer, from a fresh process.

For each kind of first request (the explorer's page, an entity's panel, a search, a neighbourhood),
a new Python process imports kg, makes the server's application for GRAPH and asks it that one
request in-process (as `kg serve --get PATH` does): the seconds until the application is made, and
until the answer is there, are printed, the median of --runs runs. With --against DIR (a checkout of
another kg, e.g. made by `git worktree add /tmp/before COMMIT`), that kg is run beside this one,
turn about, on the same graph.

    python bench/serve_start.py GRAPH [--runs 5] [--against DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

#: One first request, timed in a fresh process; prints the seconds to the app and to the answer.
FIRST = """
import json, sys, time
start = time.perf_counter()
from kg import serve
app = serve.make_app(sys.argv[1], timeout=60)
made = time.perf_counter()
path = sys.argv[2]
if "{node}" in path:
    tables = app.index().tables
    path = path.replace("{node}", tables.ids[min(5, tables.first - 1)])
status, _, body = serve.get(app, path)
done = time.perf_counter()
app.close()
print(json.dumps({"made": made - start, "answered": done - start, "status": status, "bytes": len(body)}))
"""

REQUESTS = {"explorer page": "/", "entity panel": "/entity/{node}.json?related=0", "search": "/search.json?q=learning",
            "neighbourhood": "/neighbourhood.json?id={node}&k=1"}


def first(checkout: Path, graph: str, path: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", FIRST, graph, path], env=env, capture_output=True, text=True,
                          check=True, cwd=Path(graph).resolve().parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graph", help="a graph built by kg build (its -o path)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, metavar="DIR", help="a checkout of another kg to time beside this one")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    versions = ([("before", args.against.resolve())] if args.against else []) + [("now", here)]
    graph = str(Path(args.graph).absolute())
    print(f"command: python {' '.join(sys.argv)}\n")
    print("| first request | kg | app made s | answered s (from the process's start) | status | bytes |")
    print("|---|---|---:|---:|---:|---:|")
    for name, path in REQUESTS.items():
        runs = {label: [] for label, _ in versions}
        for _ in range(args.runs):
            for label, checkout in versions:  # turn about, so that a busy spell weighs on both
                runs[label].append(first(checkout, graph, path))
        for label, found in runs.items():
            print(f"| {name} | {label} | {statistics.median(r['made'] for r in found):.2f} "
                  f"| {statistics.median(r['answered'] for r in found):.2f} | {found[-1]['status']} "
                  f"| {found[-1]['bytes']:,} |", flush=True)


if __name__ == "__main__":
    main()
