"""Serve latency: every example query and every page of `kg serve`, timed over HTTP.

A synthetic graph of --papers papers (20,000 by default) is built with kg's
own graph builder and writer (kg.link.graph.build_graph, kg.build.write_outputs),
so it is in whatever vocabulary and layout the kg being measured writes: run
this script against two versions of kg (PYTHONPATH=...) to compare them.
Each synthetic paper's abstract has one sentence per mention ("We propose
Method12 in setting 40."), with Zipf-distributed entities of the five types,
a usedFor relation between its proposed method and its task, and a result on
its dataset. A graph built by `kg build` can be given too.

Each example query (kg/query/rq) runs with its parameters bound to a
mid-frequency entity of the right type (the 10th most mentioned); each page
(entity, paper, related methods, neighbourhood, search, the explorer, the
query page) is asked for that entity (or its first paper), and the entity page of the most
mentioned method too (a hub, whose panel reads the most). One warm-up, then
--runs timed requests; the table gives the first request's time (pages
keep some answers, e.g. related methods) and p50 and p95 of the wall time seen by
the client. A request still running at --timeout is stopped by the server.

With --virtuoso, each graph is also published into a Virtuoso started here (Debian's `virtuoso-t`,
on free loopback ports, as bench/publish.py does) and measured again as `kg serve --sparql URL`
serves it: the same requests, through that server.

With --against DIR (a checkout of another kg, e.g. `git worktree add /tmp/before COMMIT`), the
synthetic graph is also built and measured with that kg (in a subprocess) and the table puts its
figures beside this one's. GRAPH, built by one kg, is measured with this one only.

    python bench/serve_latency.py [GRAPH] [--papers 20000] [--runs 20] [--keep DIR] [--against DIR] [--virtuoso]
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pyoxigraph as ox

from kg import serve, vocab
from kg.errors import KGError
from kg.query import examples, with_values
from kg.store import PREFIXES, open_graph, store_dir

RANK = 10  # bind the 10th most mentioned entity: neither the head of the Zipf curve nor its tail
# Entities per type in the synthetic graph, and the mentions each paper makes.
SYNTH_ENTITIES = {"Task": 2000, "Method": 5000, "Dataset": 1500, "Metric": 300, "Model": 1200}
SYNTH_MENTIONS = [("proposes", "Method"), ("addresses", "Task"), ("uses", "Method"), ("uses", "Model"),
                  ("evaluatesOn", "Dataset"), ("measures", "Metric"), ("comparesWith", "Method")]


# ------------------------------------------------------------------ the synthetic graph


def synthesise(stem: Path, papers: int, *, seed: int = 7) -> None:
    """Build the synthetic graph of ``papers`` papers and write it (and its store) at ``stem``."""
    # Imported here, not with the module: kg serve's query workers start by importing this script,
    # under their memory cap, and the build's imports (spaCy, and torch where it is installed) would
    # take most of it.
    from kg.build import write_outputs
    from kg.link.concepts import annotate
    from kg.link.graph import build_graph
    from kg.model import Entity, Mention, Paper, PaperExtraction, Relation, Result

    rng = random.Random(seed)
    names = {kind: [f"{kind}{i}" for i in range(n)] for kind, n in SYNTH_ENTITIES.items()}
    weights = {kind: [1 / (rank + 1) ** 1.1 for rank in range(n)] for kind, n in SYNTH_ENTITIES.items()}
    extractions, mentions_of, relations = [], {}, []
    for number in range(papers):
        paper_id = f"synthetic-{number:06d}"
        sentences, mentions, parts, abstract = [], [], [], ""
        for role, kind in SYNTH_MENTIONS:
            if role == "comparesWith" and rng.random() < 0.5:
                continue
            name = rng.choices(names[kind], weights[kind])[0]
            at = len(abstract) + (1 if abstract else 0)
            lead = f"We {role} "
            sentence = f"{lead}{name} in setting {rng.randint(1, 999)}."
            abstract += (" " if abstract else "") + sentence
            index = len(mentions)
            mentions.append(Mention(at + len(lead), at + len(lead) + len(name), name, kind, index, 0.9, "synthetic/1",
                                    role=role, role_confidence=0.9))
            mentions_of.setdefault((kind, name), []).append((paper_id, index))
            parts.append(kind)
            sentences.append((at, at + len(sentence)))
        ex = PaperExtraction(Paper(paper_id, abstract, venue="Synthetic 2026", year=2026), sentences, mentions, {})
        dataset, metric = parts.index("Dataset"), parts.index("Metric")
        ex.results = [Result(mentions[dataset].end + 1, mentions[dataset].end + 4, 80.0 + number % 20, "%", dataset,
                             metric, dataset, 0, None, "score", 0.8)]
        relations.append((mentions[0].text, mentions[1].text, paper_id))
        extractions.append(ex)
    entities = [Entity(name.lower(), kind, name, [name.lower() + "s"], refs) for (kind, name), refs in mentions_of.items()]
    links = [Relation(method.lower(), "usedFor", task.lower(), 0.8, (paper_id, 0), 0)
             for method, task, paper_id in relations]
    # Reach and salience, as a build gives them (older kg annotated inside build_graph).
    annotated = "annotations" in inspect.signature(build_graph).parameters
    G = build_graph(extractions, entities, links, **({"annotations": annotate(entities, [], extractions)} if annotated else {}))
    options = {"formats": ("nt",)} if "formats" in inspect.signature(write_outputs).parameters else {}
    write_outputs(G, stem, base=vocab.DEFAULT_BASE, title=stem.name, **options)


# ------------------------------------------------------------------ measuring


def top_entity(store: ox.Store, kind: str, rank: int = RANK) -> str:
    """The label of the ``rank``-th most mentioned entity of ``kind``."""
    rows = list(store.query(f"SELECT ?label WHERE {{ ?e a kg:{kind} ; skos:prefLabel ?label ; kg:paperCount ?n }} "
                            f"ORDER BY DESC(?n) ?label LIMIT {rank}", prefixes=PREFIXES))
    return rows[-1]["label"].value if rows else ""


def requests(app: serve.App) -> list[tuple[str, str, str, str | None]]:
    """(name, bound value, path, SPARQL or None) of every example query and every page."""
    chosen = []
    for example in examples().values():
        values = {name: top_entity(app.store, example.param_types.get(name, "Method")) or example.params[name]
                  for name in example.params}
        # Example.bind where this kg has it; older ones bound names as written, by VALUES.
        text = example.bind(values) if hasattr(example, "bind") else example.text
        if not hasattr(example, "bind"):
            for name, value in values.items():
                text = with_values(text, name, ox.Literal(value))
        chosen.append((example.name, ", ".join(values.values()), "/sparql", text))
    index = app.index()
    label = top_entity(app.store, "Method")
    node = index.by_label[("Method", label)]
    paper = sorted(p for p in index.graph.predecessors(node) if p.startswith("paper/"))[0]
    quoted = urllib.parse.quote(node)
    hub = urllib.parse.quote(index.by_label[("Method", top_entity(app.store, "Method", 1))])
    for name, path in (("page: entity", f"/entity/{quoted}.json"), ("page: entity, no related", f"/entity/{quoted}.json?related=0"),
                       ("page: entity, the most mentioned", f"/entity/{hub}.json"),
                       ("page: paper", f"/{urllib.parse.quote(paper)}.json"),
                       ("page: related", f"/related.json?id={quoted}"),
                       ("page: neighbourhood k=1", f"/neighbourhood.json?id={quoted}&k=1"),
                       ("page: neighbourhood k=2", f"/neighbourhood.json?id={quoted}&k=2"),
                       ("page: search", f"/search.json?q={urllib.parse.quote(label[:4])}"),
                       ("page: explorer", "/"), ("page: query", "/query.json"), ("page: index", "/index.json")):
        bound = paper if "paper" in name else top_entity(app.store, "Method", 1) if "most" in name else label
        chosen.append((name, bound, path, None))
    return chosen


def ask(url: str, query: str | None, timeout: float) -> float:
    """Seconds one request took (a POST of ``query``, or a GET); RuntimeError on an error status."""
    if query is None:
        request = urllib.request.Request(url)
    else:
        data = urllib.parse.urlencode({"query": query}).encode()
        request = urllib.request.Request(url, data=data, headers={"Accept": "application/sparql-results+json"})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout + 30) as response:
            response.read()
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"{error.code}: {error.read()[:200].decode(errors='replace')}") from None
    return time.perf_counter() - started


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def measure(graph: Path, runs: int, timeout: float, sparql: str | None = None) -> tuple[float, list[dict]]:
    """Serve ``graph`` (from the SPARQL server at ``sparql``, where it was published, if given); return
    the server's start-up seconds (until it is warm: store, index and what first pages need,
    :meth:`kg.serve.App.warm_up`) and one row per request."""
    started = time.perf_counter()
    app = serve.App(graph, timeout=timeout, max_results=1_000_000, sparql=sparql)
    app.warm_up()  # what kg serve does as it starts
    app.pool.wait_ready(timeout=1800)
    startup = time.perf_counter() - started
    running = serve.start(app, port=0)
    rows = []
    try:
        for name, value, path, query in requests(app):
            app.pool.wait_ready(timeout=1800)  # a worker replaced after a stopped query reloads first
            try:
                first = ask(running.url + path, query, timeout)  # a request stopped here is not repeated
                times = [ask(running.url + path, query, timeout) for _ in range(runs)]
                rows.append({"request": name, "bound": value, "first": first,
                             "p50": percentile(times, 50), "p95": percentile(times, 95)})
            except RuntimeError as error:
                rows.append({"request": name, "bound": value, "first": None, "p50": None, "p95": None,
                             "error": str(error)})
    finally:
        running.stop()
    return startup, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", nargs="?", help="A graph built by kg build (its -o path).")
    parser.add_argument("--papers", type=int, default=20_000, help="Papers in the synthetic graph (0: none).")
    parser.add_argument("--runs", type=int, default=20, help="Timed requests of each kind.")
    parser.add_argument("--timeout", type=float, default=10, help="Seconds a request may take before it is stopped.")
    parser.add_argument("--keep", type=Path, help="Build the synthetic graph in this folder and keep it.")
    parser.add_argument("--json", type=Path, help="Also write the rows to this file.")
    parser.add_argument("--against", type=Path, metavar="DIR", help="a checkout of another kg to measure beside this one")
    parser.add_argument("--virtuoso", action="store_true", help="also publish each graph into Virtuoso and serve it from there")
    args = parser.parse_args()

    before = None
    if args.against:
        before = measure_with(args.against.resolve(), args)
    rows = measure_all(args)
    if args.json:  # this kg's rows, and with --against the other's, each saying which kg it measured
        every = [{**row, "kg": "now"} for row in rows] + [{**row, "kg": "before"} for row in before or []]
        args.json.write_text(json.dumps({"command": " ".join(["python", *sys.argv]), "rows": every}, indent=1),
                             encoding="utf-8")
    print_table(rows, before, args.timeout)


def measure_with(checkout: Path, args) -> list[dict]:
    """The rows of this script run with the kg at ``checkout`` (a subprocess; its graphs are its own)."""
    with tempfile.TemporaryDirectory(prefix="kg-serve-bench-before-") as scratch:
        out = Path(scratch) / "rows.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--papers", str(args.papers), "--runs", str(args.runs),
                   "--timeout", str(args.timeout), "--json", str(out)]
        if args.keep:
            command += ["--keep", str(args.keep.resolve() / "before")]
        if args.virtuoso:
            command.append("--virtuoso")
        # From the scratch folder, with the checkout first on the path: it is the kg imported.
        subprocess.run(command, check=True, cwd=scratch, stdout=subprocess.DEVNULL,
                       env={**os.environ, "PYTHONPATH": str(checkout)})
        return json.loads(out.read_text(encoding="utf-8"))["rows"]


def measure_all(args) -> list[dict]:
    graphs = []
    if args.graph:
        try:
            open_graph(args.graph)  # fail now, not after synthesising
        except KGError as error:
            sys.exit(f"Error: {error}")
        graphs.append((Path(args.graph).name, Path(args.graph)))
    scratch = tempfile.TemporaryDirectory(prefix="kg-serve-bench-")
    if args.papers:
        folder = args.keep or Path(scratch.name)
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"synthetic{args.papers}"
        started = time.perf_counter()
        if store_dir(stem) is None:
            synthesise(stem, args.papers)
        print(f"built the synthetic graph of {args.papers:,} papers in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
        graphs.append((f"synthetic {args.papers:,}", stem))
    rows = []
    for label, graph in graphs:
        store = open_graph(graph)
        triples = len(store)
        papers = len(list(store.query("SELECT ?p WHERE { ?p a kg:Paper }", prefixes=PREFIXES)))
        nt = graph.with_name(graph.name + ".nt")
        per_paper = nt.stat().st_size / papers / 1000 if nt.is_file() else None
        del store
        startup, measured = measure(graph, args.runs, args.timeout)
        rows += [{"graph": label, "triples": triples, "kb_per_paper": per_paper, "startup": startup, **row}
                 for row in measured]
        if args.virtuoso:
            startup, measured = measured_in_virtuoso(graph, args, Path(scratch.name))
            rows += [{"graph": label + ", Virtuoso", "triples": triples, "kb_per_paper": per_paper, "startup": startup,
                      **row} for row in measured]
    scratch.cleanup()
    return rows


def measured_in_virtuoso(graph: Path, args, scratch: Path) -> tuple[float, list[dict]]:
    """``graph`` published into a Virtuoso started in ``scratch``, then measured as kg serve --sparql serves it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from servers import virtuoso_server

    from kg.query.publish import Virtuoso, publish

    folder = scratch / "virtuoso"
    (folder / "load").mkdir(parents=True)
    with virtuoso_server(folder, folder / "load") as (url, isql):
        target = Virtuoso(url, isql=isql, load_dir=folder / "load")
        done = publish(graph, target)
        print(f"published {done.triples:,} triples into Virtuoso in {done.seconds:.1f} s", file=sys.stderr)
        return measure(graph, args.runs, args.timeout, sparql=target.query_url)


def _timing(row: dict | None, timeout: float) -> str:
    if row is None:
        return "— | — | —"
    if row["p50"] is not None:
        return f"{row['first'] * 1000:.1f} | {row['p50'] * 1000:.1f} | {row['p95'] * 1000:.1f}"
    if row["error"].startswith("503"):
        return f"stopped at {timeout:g} s | — | —"
    return f"error: {row['error'][:40]} | — | —"


def print_table(rows: list[dict], before: list[dict] | None, timeout: float) -> None:
    """One line per graph and request; with ``before``, its figures first (matched by graph and request)."""
    def about(row, sep=" | "):
        kb = f"{row['kb_per_paper']:.1f}" if row.get("kb_per_paper") else "-"
        return sep.join([f"{row['triples']:,}", kb, f"{row['startup']:.1f} s"])

    earlier = {(row["graph"], row["request"]): row for row in before or ()}
    if before is not None:
        print("| graph | request (bound to) | triples, KB/paper, start-up: before | first, p50, p95 ms: before "
              "| triples, KB/paper, start-up: now | first, p50, p95 ms: now |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            old = earlier.get((row["graph"], row["request"]))
            print(f"| {row['graph']} | {row['request']} ({row['bound'] or '-'}) | {about(old, ' / ') if old else '—'} "
                  f"| {_timing(old, timeout).replace(' | ', ' / ')} | {about(row, ' / ')} "
                  f"| {_timing(row, timeout).replace(' | ', ' / ')} |")
        return
    print("| graph | triples | N-Triples KB/paper | start-up | request (bound to) | first ms | p50 ms | p95 ms |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['graph']} | {about(row)} | {row['request']} ({row['bound'] or '-'}) | {_timing(row, timeout)} |")


if __name__ == "__main__":
    main()
