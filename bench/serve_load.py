"""Serve under a mixed load: many loopback clients at once against `kg serve`, with socketserver's
old listen backlog of 5 and with the server's own, in one run.

Each of --clients threads sends --requests requests, each on a new connection (as browsers and
scripts without keep-alive do), cycling through the kinds of page a reader asks for: a SPARQL ASK
through the query workers, the JSON of the most mentioned entity (a hub), of entities of the long
tail (a different one each time, so no cache helps), of a paper, and a search. The table gives p50, p99 and the worst wall time per kind of page. Only 127.0.0.1 is
contacted; the run is bounded by the request count.

    python bench/serve_load.py graphs/sample [--clients 16] [--requests 50]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import statistics
import time
import urllib.parse
import urllib.request

from kg import serve
from kg.serve import server as serve_server

ASK = "/sparql?" + urllib.parse.urlencode({"query": "ASK { ?paper a kg:Paper }"})


def timed_get(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
    return time.perf_counter() - started


def mixed_paths(app, count: int) -> list[tuple[str, str]]:
    """``count`` (kind, path) pairs, cycling through the kinds of page."""
    graph = app.index().graph
    entities = sorted((node for node in graph if not node.startswith("paper/")),
                      key=lambda node: (-graph.nodes[node].get("papers", 0), node))
    papers = sorted(node for node in graph if node.startswith("paper/"))
    quote = lambda node: urllib.parse.quote(node, safe="/")  # noqa: E731
    not_kept = itertools.cycle(entities[len(entities) // 10:] or entities)  # the long tail, each page new
    paper = itertools.cycle(papers)
    words = itertools.cycle(["learning", "model", "graph", "vision", "language", "robot", "policy"])
    kinds = itertools.cycle([
        ("SPARQL ASK", lambda: ASK),
        ("entity, most mentioned", lambda: f"/entity/{quote(entities[0])}.json?related=0"),
        ("entity, long tail", lambda: f"/entity/{quote(next(not_kept))}.json"),
        ("paper", lambda: f"/{quote(next(paper))}.json"),
        ("search", lambda: "/search.json?" + urllib.parse.urlencode({"q": next(words)})),
    ])
    return [(kind, path()) for kind, path in itertools.islice(kinds, count)]


def load(graph: str, backlog: int, clients: int, requests: int) -> dict[str, list[float]]:
    """Wall times per kind of page of ``clients`` x ``requests`` requests against a server
    listening with ``backlog``."""
    server_class = type("Server", (serve_server._Server,), {"request_queue_size": backlog})
    app = serve.make_app(graph)
    app.pool.wait_ready(timeout=600)
    original, serve_server._Server = serve_server._Server, server_class
    try:
        running = serve.start(app, port=0)
    finally:
        serve_server._Server = original
    try:
        work = mixed_paths(app, clients * requests)
        times: dict[str, list[float]] = {kind: [] for kind, _ in work}
        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            jobs = [(kind, pool.submit(timed_get, running.url + path)) for kind, path in work]
            for kind, job in jobs:
                times[kind].append(job.result())
        return times
    finally:
        running.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="A graph built by kg build (its -o path).")
    parser.add_argument("--clients", type=int, default=16, help="Concurrent clients.")
    parser.add_argument("--requests", type=int, default=50, help="Requests per client.")
    args = parser.parse_args()
    print("| listen backlog | page | requests | p50 ms | p99 ms | worst ms |")
    print("|---:|---|---:|---:|---:|---:|")
    for backlog in (5, serve_server._Server.request_queue_size):
        for kind, times in load(args.graph, backlog, args.clients, args.requests).items():
            p = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else times * 99
            print(f"| {backlog} | {kind} | {len(times)} | {p[49] * 1000:.1f} | {p[98] * 1000:.1f} "
                  f"| {max(times) * 1000:.1f} |", flush=True)


if __name__ == "__main__":
    main()
