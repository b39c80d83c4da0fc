"""Serve latency: the example queries through `kg serve`'s SPARQL endpoint, pyoxigraph vs rdflib.

For each graph, the same HTTP endpoint (kg.serve.App, queries in a worker
process) is backed once by the embedded pyoxigraph store `kg build` writes
and once by rdflib's in-memory engine holding the same N-Triples. Each
example query (kg/queries) runs with its parameter bound to a mid-frequency
entity of the right type (the 10th most mentioned), once to warm up and then
--runs times (--rdflib-runs for rdflib) over HTTP; the table gives p50 and p95
of the wall time seen by the client. For reference it also serves the graph
from an in-memory pyoxigraph store loaded from the same N-Triples. A query
still running at --timeout is stopped by the endpoint and not repeated.

Graphs: the one given (the -o path of `kg build`), and a synthetic graph of
--papers papers (20,000 by default) written as N-Triples here, in kg's
vocabulary (kg/rdf.py, kg/vocab.py): papers with an abstract whose sentences
mention Zipf-distributed entities of the five types, each mention a role
triple plus a kg:Statement with the sentence and oa: selectors.

    python bench/serve_latency.py /tmp/iclr/iclr [--papers 20000] [--runs 20] [--rdflib-runs 5]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
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
from kg.queries import examples, with_values
from kg.store import PREFIXES, STORE_SUFFIX, fill_store, graph_file, open_graph, store_dir

RANK = 10  # bind the 10th most mentioned entity: neither the head of the Zipf curve nor its tail
BASE = vocab.DEFAULT_BASE
# Entities per type in the synthetic graph, and how many mentions of each type a paper makes.
SYNTH_ENTITIES = {"Task": 2000, "Method": 5000, "Dataset": 1500, "Metric": 300, "Model": 1200}
SYNTH_MENTIONS = [("proposes", "Method"), ("addresses", "Task"), ("uses", "Method"), ("uses", "Model"),
                  ("evaluatesOn", "Dataset"), ("measures", "Metric"), ("comparesWith", "Method")]


# ------------------------------------------------------------------ the engines compared


def oxigraph_memory_engine(path: str):
    """Answer requests from an in-memory pyoxigraph store loaded from ``path``: how much the
    on-disk store's reads cost, for reference."""
    store = ox.Store()
    store.bulk_load(path=path, format=ox.RdfFormat.N_TRIPLES)

    def answer(request: dict) -> dict:
        return serve.result_reply(store.query(request["query"], prefixes=PREFIXES), request)

    return answer


def rdflib_engine(path: str):
    """Answer requests from an rdflib in-memory graph of ``path`` (runs in a kg.serve worker)."""
    import rdflib

    graph = rdflib.Graph()
    graph.parse(path, format="nt")

    def answer(request: dict) -> dict:
        result = graph.query(request["query"], initNs=PREFIXES)
        return {"status": 200, "type": "application/sparql-results+json", "body": result.serialize(format="json"),
                "truncated": False}

    return answer


# ------------------------------------------------------------------ the synthetic graph


def _literal(text: str, datatype: str | None = None) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"' + (f"^^<{datatype}>" if datatype else "")


def synthesise(path: Path, papers: int, *, seed: int = 7) -> int:
    """Write a graph of ``papers`` papers to ``path`` as N-Triples; return the number of triples."""
    rng = random.Random(seed)
    P = {name: str(ns) for name, ns in vocab.NAMESPACES.items()}
    kg, rdf, rdfs, skos, dct, oa, prov, xsd = (P[k] for k in ("kg", "rdf", "rdfs", "skos", "dcterms", "oa", "prov", "xsd"))
    names = {kind: [f"{kind}{i}" for i in range(n)] for kind, n in SYNTH_ENTITIES.items()}
    weights = {kind: [1 / (rank + 1) ** 1.1 for rank in range(n)] for kind, n in SYNTH_ENTITIES.items()}
    mentioned: dict[tuple[str, str], set] = {}
    extractor = str(vocab.extractor_iri(BASE, "synthetic/1"))
    lines = 0
    with path.open("w", encoding="utf-8") as out:
        def triple(s: str, p: str, o: str) -> None:
            nonlocal lines
            out.write(f"<{s}> <{p}> {o} .\n")
            lines += 1

        for number in range(papers):
            paper_id = f"synthetic-{number:06d}"
            paper = str(vocab.paper_iri(BASE, paper_id))
            picks = []
            for role, kind in SYNTH_MENTIONS:
                if role == "comparesWith" and rng.random() < 0.5:
                    continue
                picks.append((role, kind, rng.choices(names[kind], weights[kind])[0]))
            sentences, spans, at = [], [], 0
            for role, kind, name in picks:  # one sentence per mention, the mention at a known offset
                lead = f"We {role} "
                sentence = f"{lead}{name} in setting {rng.randint(1, 999)}."
                spans.append((at + len(lead), at + len(lead) + len(name), sentence))
                sentences.append(sentence)
                at += len(sentence) + 1
            abstract = " ".join(sentences)
            label = sentences[0][:59] + "…"
            for p, o in ((f"{rdf}type", f"<{kg}Paper>"), (f"{dct}identifier", _literal(paper_id)),
                         (f"{dct}abstract", _literal(abstract)), (f"{rdfs}label", _literal(label)),
                         (f"{kg}venue", _literal("Synthetic 2026")), (f"{dct}date", _literal("2026", f"{xsd}gYear"))):
                triple(paper, p, o)
            for (role, kind, name), (start, end, sentence) in zip(picks, spans):
                entity = str(vocab.entity_iri(BASE, kind, name.lower()))
                mentioned.setdefault((kind, name), set()).add(number)
                triple(paper, f"{kg}{role}", f"<{entity}>")
                statement = str(vocab.statement_iri(BASE, paper_id, role, name.lower(), start))
                position, quote = str(vocab.selector_iri(statement, "pos")), str(vocab.selector_iri(statement, "quote"))
                for p, o in ((f"{rdf}type", f"<{kg}Statement>"), (f"{rdf}subject", f"<{paper}>"),
                             (f"{rdf}predicate", f"<{kg}{role}>"), (f"{rdf}object", f"<{entity}>"),
                             (f"{oa}hasSelector", f"<{position}>"), (f"{oa}hasSelector", f"<{quote}>"),
                             (f"{prov}wasAttributedTo", f"<{extractor}>"), (f"{prov}wasDerivedFrom", f"<{paper}>"),
                             (f"{kg}confidence", _literal("0.900", f"{xsd}decimal")), (f"{kg}sentence", _literal(sentence))):
                    triple(statement, p, o)
                triple(position, f"{rdf}type", f"<{oa}TextPositionSelector>")
                triple(position, f"{oa}start", _literal(str(start), f"{xsd}nonNegativeInteger"))
                triple(position, f"{oa}end", _literal(str(end), f"{xsd}nonNegativeInteger"))
                triple(quote, f"{rdf}type", f"<{oa}TextQuoteSelector>")
                triple(quote, f"{oa}exact", _literal(name))
        for (kind, name), paper_numbers in sorted(mentioned.items()):
            entity = str(vocab.entity_iri(BASE, kind, name.lower()))
            for p, o in ((f"{rdf}type", f"<{kg}{kind}>"), (f"{skos}prefLabel", _literal(name)),
                         (f"{rdfs}label", _literal(name)), (f"{skos}altLabel", _literal(name.lower() + "s")),
                         (f"{kg}paperCount", _literal(str(len(paper_numbers)), f"{xsd}integer"))):
                triple(entity, p, o)
        triple(extractor, f"{rdf}type", f"<{kg}Extractor>")
        triple(extractor, f"{rdfs}label", _literal("synthetic/1"))
    return lines


# ------------------------------------------------------------------ measuring


#: engine -> (the function a kg.serve worker makes its engine with, the file or folder it is given)
ENGINES = {
    "pyoxigraph store": (serve.oxigraph_engine, store_dir),
    "pyoxigraph in memory": (oxigraph_memory_engine, graph_file),
    "rdflib": (rdflib_engine, graph_file),
}


def bound_examples(store: ox.Store) -> list[tuple[str, str, str]]:
    """(name, bound value, query text) for each example, its parameter bound to a mid-frequency entity."""
    chosen = []
    for example in examples().values():
        text, values = example.text, []
        for name in example.params:
            kind = example.param_types.get(name, "Method")
            rows = list(store.query(f"SELECT ?label WHERE {{ ?e a kg:{kind} ; skos:prefLabel ?label ; kg:paperCount ?n }} "
                                    f"ORDER BY DESC(?n) ?label LIMIT {RANK}", prefixes=PREFIXES))
            value = rows[-1]["label"].value if rows else example.params[name]
            text = with_values(text, name, ox.Literal(value))
            values.append(value)
        chosen.append((example.name, ", ".join(values), text))
    return chosen


def ask(url: str, query: str, timeout: float) -> tuple[float, int]:
    """Seconds one POST took, and the number of rows it returned (RuntimeError with the server's
    message when it answers an error, e.g. 503 when the query was stopped at the time limit)."""
    data = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(url, data=data, headers={"Accept": "application/sparql-results+json"})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout + 30) as response:
            body = response.read()
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"{error.code}: {json.loads(error.read())['error']}") from None
    return time.perf_counter() - started, len(json.loads(body)["results"]["bindings"])


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def measure(graph: Path, engine: str, runs: int, timeout: float) -> tuple[float, list[dict]]:
    """Serve ``graph`` with ``engine``; return the engine's start-up seconds and one row per example."""
    started = time.perf_counter()
    make, source = ENGINES[engine]
    pool = serve.QueryPool(make, str(source(graph)), size=1, timeout=timeout)
    pool.wait_ready(timeout=1800)
    startup = time.perf_counter() - started
    app = serve.App(graph, timeout=timeout, max_results=1_000_000, pool=pool)
    running = serve.start(app, port=0)
    rows = []
    try:
        for name, value, query in bound_examples(app.store):
            pool.wait_ready(timeout=1800)  # a worker replaced after a stopped query reloads its engine first
            try:
                ask(running.url + "/sparql", query, timeout)  # warm-up; a query stopped here is not repeated
                times, found = [], 0
                for _ in range(runs):
                    seconds, found = ask(running.url + "/sparql", query, timeout)
                    times.append(seconds)
                rows.append({"query": name, "bound": value, "rows": found, "runs": runs,
                             "p50": percentile(times, 50), "p95": percentile(times, 95)})
            except RuntimeError as error:
                rows.append({"query": name, "bound": value, "rows": "-", "runs": 0, "p50": None, "p95": None,
                             "error": str(error)})
    finally:
        running.stop()
    return startup, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", nargs="?", help="A graph built by kg build (its -o path).")
    parser.add_argument("--papers", type=int, default=20_000, help="Papers in the synthetic graph (0: none).")
    parser.add_argument("--runs", type=int, default=20, help="Timed runs per query on pyoxigraph.")
    parser.add_argument("--rdflib-runs", type=int, default=5, help="Timed runs per query on rdflib (slow).")
    parser.add_argument("--timeout", type=float, default=60, help="Seconds a query may take before it is stopped.")
    parser.add_argument("--engines", nargs="+", choices=list(ENGINES), default=list(ENGINES),
                        help="Engines to measure (default: all).")
    parser.add_argument("--keep", type=Path, help="Write the synthetic graph into this folder and keep it.")
    args = parser.parse_args()

    graphs = []
    if args.graph:
        try:
            graph_file(args.graph)  # fail now, not after synthesising
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
            triples = synthesise(stem.with_name(stem.name + ".nt"), args.papers)
            fill_store(stem.with_name(stem.name + ".nt"), stem.with_name(stem.name + STORE_SUFFIX))
        else:  # kept from an earlier run
            triples = len(open_graph(stem))
        print(f"synthesised {args.papers:,} papers, {triples:,} triples, and filled the store "
              f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        graphs.append((f"synthetic {args.papers:,} papers", stem))

    print("| graph | triples | engine | start-up | query (bound to) | rows | runs | p50 ms | p95 ms |")
    print("|---|---:|---|---:|---|---:|---:|---:|---:|")
    for label, graph in graphs:
        triples = len(open_graph(graph))
        for engine in args.engines:
            runs = args.rdflib_runs if engine == "rdflib" else args.runs
            startup, rows = measure(graph, engine, runs, args.timeout)
            for row in rows:
                if row["p50"] is not None:
                    timing = [f"{row['p50'] * 1000:.1f}", f"{row['p95'] * 1000:.1f}"]
                elif row["error"].startswith("503"):
                    timing = [f"stopped at {args.timeout:g} s", "—"]
                else:
                    timing = ["error", row["error"][:80]]
                print(f"| {label} | {triples:,} | {engine} | {startup:.2f} s | {row['query']} ({row['bound'] or '-'}) "
                      f"| {row['rows']} | {row['runs']} | {timing[0]} | {timing[1]} |", flush=True)
    scratch.cleanup()


if __name__ == "__main__":
    main()
