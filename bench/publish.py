"""Publish: kg publish into an Oxigraph server and Virtuoso, then every example query through each,
beside the embedded store.

The graph is GRAPH (built by `kg build`) or the synthetic graph of --papers papers that
bench/serve_latency.py builds with kg's own graph builder (100,000 by default). Both servers are
started here on free loopback ports in a scratch folder (the `oxigraph` CLI from PyPI, Debian's
`virtuoso-t`) and stopped at the end. For each server it prints the bulk load (seconds, triples/s);
then, for each example query bound to the 10th most mentioned entity of its type, p50 and p95 of
--runs timed runs (after one warm-up) in the embedded store (in-process) and through each server
(SPARQL over HTTP, parsed by the client), and whether each server's answer equals the store's.

    python bench/publish.py [GRAPH] [--papers 100000] [--runs 20] [--keep DIR] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

import pyoxigraph as ox  # noqa: E402

from kg.query.endpoint import published_build  # noqa: E402
from kg.query.publish import OxigraphServer, Virtuoso, publish  # noqa: E402
from kg.query import examples  # noqa: E402
from kg.store import PREFIXES, open_graph  # noqa: E402
from serve_latency import synthesise, top_entity  # noqa: E402
from servers import answer_rows, concatenated, oxigraph_server, virtuoso_server  # noqa: E402


def timed(run, runs: int) -> tuple[list[float], object]:
    answer = run()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times, answer


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", nargs="?", help="A graph built by kg build (its -o path).")
    parser.add_argument("--papers", type=int, default=100_000, help="Papers of the synthetic graph (without GRAPH).")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", help="Build the synthetic graph here (reused when already there).")
    parser.add_argument("--json", help="Also write the figures to this file.")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="kg-bench-publish-"))
    graph = Path(args.graph) if args.graph else Path(args.keep or scratch) / f"synthetic-{args.papers}"
    if not args.graph and not graph.with_name(graph.name + ".nt").exists():
        started = time.perf_counter()
        graph.parent.mkdir(parents=True, exist_ok=True)
        synthesise(graph, args.papers)
        print(f"Synthetic graph of {args.papers:,} papers built in {time.perf_counter() - started:.0f} s", flush=True)
    store = open_graph(graph)
    print(f"{graph}: {len(store):,} triples", flush=True)

    queries = {}
    for example in examples().values():
        values = {name: top_entity(store, example.param_types.get(name, "Method")) or example.params[name]
                  for name in example.params}
        queries[example.name] = (", ".join(values.values()), example.bind(values))

    figures = {"graph": str(graph), "triples": len(store), "loads": {}, "queries": {}}
    expected = {name: answer_rows(store.query(text, prefixes=PREFIXES), concatenated(text))
                for name, (_, text) in queries.items()}
    for name, (bound, text) in queries.items():
        def run(text=text):
            result = store.query(text, prefixes=PREFIXES)
            return result if isinstance(result, ox.QueryBoolean) else list(result)

        times, _ = timed(run, args.runs)
        figures["queries"][name] = {"bound": bound, "embedded": [percentile(times, 50), percentile(times, 95)],
                                    "rows": len(expected[name])}
    del store

    for engine in ("oxigraph", "virtuoso"):
        folder = scratch / engine
        folder.mkdir()
        if engine == "oxigraph":
            context = oxigraph_server(folder)
        else:
            (folder / "load").mkdir()
            context = virtuoso_server(folder, folder / "load")
        with context as address:
            target = (OxigraphServer(address) if engine == "oxigraph"
                      else Virtuoso(address[0], isql=address[1], load_dir=folder / "load"))
            done = publish(graph, target)
            figures["loads"][engine] = {"triples": done.triples, "seconds": done.seconds, "rate": done.rate}
            print(f"{engine}: loaded {done.triples:,} triples in {done.seconds:.1f} s ({done.rate:,.0f} triples/s)",
                  flush=True)
            endpoint = published_build(target.query_url, done.name)
            for name, (_, text) in queries.items():
                times, _ = timed(lambda: endpoint.query(text, prefixes=PREFIXES), args.runs)
                figures["queries"][name][engine] = [percentile(times, 50), percentile(times, 95)]
                figures["queries"][name][engine + " same"] = answer_rows(endpoint.query(text, prefixes=PREFIXES),
                                                                         concatenated(text)) == expected[name]

    print()
    print("| example query | bound to | rows | embedded p50 / p95 ms | Oxigraph server p50 / p95 ms | same | "
          "Virtuoso p50 / p95 ms | same |")
    print("|---|---|---:|---:|---:|---|---:|---|")
    ms = lambda pair: f"{pair[0] * 1000:.1f} / {pair[1] * 1000:.1f}"  # noqa: E731
    for name, row in figures["queries"].items():
        print(f"| {name} | {row['bound']} | {row['rows']} | {ms(row['embedded'])} | {ms(row['oxigraph'])} | "
              f"{'yes' if row['oxigraph same'] else 'NO'} | {ms(row['virtuoso'])} | {'yes' if row['virtuoso same'] else 'NO'} |")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
