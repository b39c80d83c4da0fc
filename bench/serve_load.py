"""Serve under load: many loopback clients at once against `kg serve`, with socketserver's old
listen backlog of 5 and with the server's own, in one run.

Each of --clients threads sends --requests requests, each on a new connection (as
browsers and scripts without keep-alive do), alternating a SPARQL ASK through the
query workers and an entity's JSON page answered in the server process. The
table gives p50, p99 and the worst wall time seen by the clients. Only 127.0.0.1
is contacted; the run is bounded by the request count.

    python bench/serve_load.py graphs/sample [--clients 16] [--requests 50]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import statistics
import time
import urllib.parse
import urllib.request

from kg import serve
from kg.serve import server as serve_server

ASK = "/sparql?" + urllib.parse.urlencode({"query": "ASK { ?paper a kg:Paper }"})


def timed_get(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        response.read()
    return time.perf_counter() - started


def load(graph: str, backlog: int, clients: int, requests: int) -> list[float]:
    """Wall times of ``clients`` x ``requests`` requests against a server listening with ``backlog``."""
    server_class = type("Server", (serve_server._Server,), {"request_queue_size": backlog})
    app = serve.make_app(graph)
    app.pool.wait_ready(timeout=600)
    entity = serve.search(app.index(), "a")[0]["id"]  # any entity: its page is answered in-process
    original, serve_server._Server = serve_server._Server, server_class
    try:
        running = serve.start(app, port=0)
    finally:
        serve_server._Server = original
    paths = [ASK, f"/entity/{entity}.json?related=0"]
    try:
        timed_get(running.url + paths[1])  # warm the page's caches
        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            jobs = [pool.submit(timed_get, running.url + paths[i % 2]) for i in range(clients * requests)]
            return [job.result() for job in jobs]
    finally:
        running.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="A graph built by kg build (its -o path).")
    parser.add_argument("--clients", type=int, default=16, help="Concurrent clients.")
    parser.add_argument("--requests", type=int, default=50, help="Requests per client.")
    args = parser.parse_args()
    print("| listen backlog | clients | requests | p50 ms | p99 ms | worst ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    for backlog in (5, serve_server._Server.request_queue_size):
        times = load(args.graph, backlog, args.clients, args.requests)
        p = statistics.quantiles(times, n=100, method="inclusive")
        print(f"| {backlog} | {args.clients} | {len(times)} | {p[49] * 1000:.1f} | {p[98] * 1000:.1f} "
              f"| {max(times) * 1000:.1f} |", flush=True)


if __name__ == "__main__":
    main()
