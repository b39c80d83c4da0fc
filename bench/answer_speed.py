"""Every CLI answer's wall time, process start included, for two revisions of kg side by side.

    python bench/answer_speed.py GRAPH 545f489 HEAD [--repeat 3] [--rank N] [--json FILE]

GRAPH is a graph built by ``kg build`` (its ``-o`` path). Each revision is checked out into a
temporary git worktree (as ``bench/side_by_side.py`` does) and asked, as a person would type them:
``related`` and ``explain`` of the most mentioned method (``--rank N``: the N-th), ``similar`` of a
paper's title (its id where papers have no title) and of a title no paper has, ``compare`` of the
most mentioned task (the largest table), ``leaderboard`` of the dataset with the most results, and
``trends``. Runs alternate between the revisions (A, B, A, B, ...) so that both
see the same load; the table gives the fastest and the median of each, and the ratio B/A of the
fastest. An answer that fails (an older kg that cannot read the graph, a name it cannot find)
shows its exit status beside its time (``kg similar`` of a missing title exits 1, as it should).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from side_by_side import checkout, remove_checkout  # noqa: E402

from kg.store import PREFIXES, open_graph  # noqa: E402

def _first(store: ox.Store, query: str) -> str:
    rows = list(store.query(query, prefixes=PREFIXES))
    return rows[-1][0].value if rows else ""


def questions(graph: Path, rank: int) -> list[tuple[str, list[str]]]:
    """The commands asked, each as (row name, arguments), their names read from ``graph``: the
    ``rank``-th most mentioned method and task."""
    store = open_graph(graph)

    def ranked(kind: str) -> str:
        return _first(store, f"SELECT ?label WHERE {{ ?e a kg:{kind} ; skos:prefLabel ?label ; kg:paperCount ?n }} "
                             f"ORDER BY DESC(?n) ?label LIMIT {rank}")

    method, task = ranked("Method"), ranked("Task")
    dataset = _first(store, "SELECT ?label WHERE { ?r kg:onDataset ?d . ?d skos:prefLabel ?label } "
                            "GROUP BY ?label ORDER BY DESC(COUNT(?r)) ?label LIMIT 1")
    title = _first(store, "SELECT ?t WHERE { ?p a kg:Paper ; dcterms:title ?t } ORDER BY ?p LIMIT 1") or \
        _first(store, "SELECT ?t WHERE { ?p a kg:Paper ; dcterms:identifier ?t } ORDER BY ?p LIMIT 1")
    g = ["-g", str(graph)]
    return [("related", ["related", method, *g]), ("explain", ["explain", method, *g]),
            ("similar", ["similar", title, *g]), ("similar (no such title)", ["similar", "No paper has this title", *g]),
            ("compare", ["compare", task, *g]), ("leaderboard", ["leaderboard", dataset, *g]),
            ("trends", ["trends", *g])]


def ask(tree: Path, arguments: list[str]) -> tuple[float, int]:
    """Wall seconds of one ``kg`` command run by the kg in ``tree``, and its exit status."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kg.cli", *arguments], env=environment, cwd=tree,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graph", type=Path, help="a graph built by kg build (its -o path)")
    parser.add_argument("a", help="the revision measured against (e.g. the last round's commit)")
    parser.add_argument("b", help="the revision measured (e.g. HEAD)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command per revision")
    parser.add_argument("--rank", type=int, default=1, help="ask about the N-th most mentioned method and task")
    parser.add_argument("--json", type=Path, help="also write every time to this file (bench/targets.py reads it)")
    args = parser.parse_args()
    measured = []
    asked = questions(args.graph.resolve(), args.rank)
    with tempfile.TemporaryDirectory() as scratch:
        trees = {name: checkout(revision, Path(scratch) / name) for name, revision in (("A", args.a), ("B", args.b))}
        try:
            print(f"A = {args.a}, B = {args.b}; {args.graph}; wall seconds with process start, "
                  f"fastest (median) of {args.repeat}\n")
            print("| answer | command | A | B | B/A |\n|---|---|---|---|---|")
            for row, arguments in asked:
                times: dict[str, list[float]] = {"A": [], "B": []}
                status = {"A": 0, "B": 0}
                for _ in range(args.repeat):
                    for name, tree in trees.items():
                        seconds, code = ask(tree, arguments)
                        times[name].append(seconds)
                        status[name] = status[name] or code

                def cell(name: str) -> str:
                    ok = f" (exit {status[name]})" if status[name] else ""
                    return f"{min(times[name]):.2f} ({statistics.median(times[name]):.2f}){ok}"

                command = "kg " + " ".join(f"'{a}'" if " " in a else a for a in arguments[:-2])
                measured.append({"answer": row, "command": command, "A": times["A"], "B": times["B"], "status": status})
                print(f"| {row} | `{command}` | {cell('A')} | {cell('B')} | {min(times['B']) / min(times['A']):.2f} |",
                      flush=True)
        finally:
            for tree in trees.values():
                remove_checkout(tree)
    if args.json:
        args.json.write_text(json.dumps({"command": " ".join(["python", *sys.argv]), "graph": str(args.graph),
                                         "rank": args.rank, "A": args.a, "B": args.b, "answers": measured}, indent=1),
                             encoding="utf-8")


if __name__ == "__main__":
    main()
