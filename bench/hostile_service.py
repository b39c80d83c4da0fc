"""Hostile SERVICE: every disguise of SERVICE kg must refuse (issue 24, item 5), sent to a real
`kg serve` by GET, form POST and query POST and run by `kg query`, while a listener on loopback
counts the connections that get out: there must be none. Then the queries that only name SERVICE,
which must run; and how long kg's SPARQL lexer takes on hostile text of up to 1 MiB, and how long
the server's other pages wait meanwhile (item 7).

    python bench/hostile_service.py [GRAPH] [--timeout 10]

GRAPH is a graph built by `kg build` (default graphs/sample); when it is missing, the sample corpus
(tests/fixtures/sample.txt) is built into a scratch folder. Everything runs on 127.0.0.1, each loop
is bounded, and the server started here is stopped at the end. Exits 1 when a connection reached
the listener or a disguise was answered.
"""
from __future__ import annotations

import argparse
import json
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from guard_support import HARMLESS, disguises, listener, sparql_request  # noqa: E402

from kg.errors import KGError  # noqa: E402
from kg.sparql import QueryRefused, refuse_federation  # noqa: E402
from kg.store import graph_file, store_dir  # noqa: E402

STARTUP_LIMIT = 120.0  # seconds kg serve may take to say where it listens
METHODS = ("GET", "form", "body")


def ensure_graph(graph: Path, scratch: Path) -> Path:
    """``graph`` if it is built, else the sample corpus built into ``scratch``."""
    try:
        if store_dir(graph) is None:
            graph_file(graph)
        return graph
    except KGError:
        built = scratch / "sample"
        print(f"No graph at {graph}: building tests/fixtures/sample.txt into {built}", flush=True)
        subprocess.run([sys.executable, "-m", "kg.cli", "build", "-q", str(ROOT / "tests/fixtures/sample.txt"),
                        "-o", str(built)], check=True, timeout=600)
        return built


def start_server(graph: Path, timeout: float, *options: str) -> tuple[subprocess.Popen, str]:
    """`kg serve` on ``graph`` on a free port of 127.0.0.1, with more ``options``: the process and its URL."""
    process = subprocess.Popen([sys.executable, "-m", "kg.cli", "serve", "-g", str(graph), "--port", "0",
                                "--timeout", str(timeout), *options], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=STARTUP_LIMIT):
            process.kill()
            raise SystemExit(f"kg serve did not start within {STARTUP_LIMIT:g} s")
    line = process.stdout.readline()
    for word in line.split():
        if word.startswith("http://127.0.0.1:"):
            return process, word.rstrip("/")
    process.kill()
    raise SystemExit(f"kg serve did not say where it listens: {line!r}")


def stop_server(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def ask(url: str, method: str, query: str, timeout: float = 60) -> tuple[int, str]:
    """(status, the error's first words or "ok") of one SPARQL request."""
    request = sparql_request(url, method, query)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
            return response.status, "ok"
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return error.code, json.loads(body)["error"]
        except (ValueError, KeyError):
            return error.code, body[:80].decode("utf-8", "replace")


def kg_query(graph: Path, query: str, scratch: Path) -> tuple[int, str]:
    """(exit status, last line of output) of `kg query --file` on ``query``."""
    file = scratch / "query.rq"
    file.write_text(query, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "kg.cli", "query", "-g", str(graph), "--file", str(file)],
                            capture_output=True, text=True, timeout=120)
    lines = (result.stdout + result.stderr).strip().splitlines()
    return result.returncode, lines[-1] if lines else ""


def hostile_texts() -> dict[str, str]:
    """Hostile text for the lexer, each under its 1 MiB cap."""
    size = (1 << 20) - 100
    quotes = '\\"' * 400_000
    return {
        "800 kB of \\\" never closed": 'SELECT * { ?s ?p "' + quotes,
        "800 kB of \\\" closed, then SERVICE": 'SELECT * { ?s ?p "' + quotes + '" .SERVICE <http://127.0.0.1:9/> {} }',
        "800 kB of \\\" in a long string never closed": 'SELECT * { ?s ?p """' + quotes,
        "1 MiB of ''' never closed": "SELECT * { VALUES ?x { " + "'''x' " * (size // 7) + "} }",
        "1 MiB of variables": "SELECT * { " + "?a " * (size // 3) + "}",
        "1 MiB of keywords": "SELECT * { " + "a " * (size // 2) + "}",
        "1 MiB of VALUES rows": "SELECT * { VALUES (?x) {" + "(1)" * (size // 3) + "} }",
        "1 MiB of IRIs with # after operands": "SELECT * { ?s ?p (" + "?a <x#> " * (size // 9) + ") } # service",
        "1 MiB of backslashes": "\\" * size,
        "1 MiB of <": "<" * size,
        "10k nested {": "SELECT * " + "{" * 10_000 + "}" * 10_000,
        "60k chained ||": "SELECT * { FILTER(" + " || ".join(["true"] * 60_001) + ") }",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", nargs="?", default=str(ROOT / "graphs" / "sample"))
    parser.add_argument("--timeout", type=float, default=10.0, help="kg serve's and kg query's time limit (s)")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="kg-hostile-") as folder:
        scratch = Path(folder)
        graph = ensure_graph(Path(args.graph), scratch)
        process, url = start_server(graph, args.timeout)
        try:
            with listener() as (port, connections):
                queries = disguises(port)
                width = max(map(len, queries))
                print(f"\nkg serve {url} on {graph}; listener on 127.0.0.1:{port}\n")
                print(f"{'disguise':{width}}  GET  form body  kg query  refused as")
                for name, query in queries.items():
                    answers = [ask(url, method, query) for method in METHODS]
                    code, line = kg_query(graph, query, scratch)
                    reason = answers[0][1]
                    failures += sum(status == 200 for status, _ in answers) + (code == 0)
                    print(f"{name:{width}}  {answers[0][0]}  {answers[1][0]}  {answers[2][0]}   exit {code}  "
                          f"{reason[:60]}", flush=True)
                got_out = len(connections)
            print(f"\n{len(queries)} disguises x {len(METHODS)} methods + kg query; "
                  f"connections that reached the listener: {got_out}")
            failures += got_out

            print(f"\n{'names SERVICE, must run':{width}}  GET  form body  kg query")
            for name, query in HARMLESS.items():
                answers = [ask(url, method, query)[0] for method in METHODS]
                code, _ = kg_query(graph, query, scratch)
                failures += sum(status != 200 for status in answers) + (code != 0)
                print(f"{name:{width}}  {answers[0]}  {answers[1]}  {answers[2]}   exit {code}", flush=True)

            print(f"\n{'hostile text (lexer, in process)':44} {'chars':>9} {'seconds':>8}  outcome")
            for name, text in hostile_texts().items():
                start = time.perf_counter()
                try:
                    refuse_federation(text)
                    outcome = "passed to the engine"
                except QueryRefused as error:
                    outcome = f"{type(error).__name__} ({error.status})"
                print(f"{name:44} {len(text):9,} {time.perf_counter() - start:8.3f}  {outcome}", flush=True)

            # What the issue saw: while the server reads a hostile query, its other pages wait.
            text = hostile_texts()["800 kB of \\\" never closed"]
            waits = []

            def page_while_busy():
                time.sleep(0.05)
                start = time.perf_counter()
                urllib.request.urlopen(f"{url}/index.json", timeout=120).read()
                waits.append(time.perf_counter() - start)

            side = threading.Thread(target=page_while_busy)
            start = time.perf_counter()
            side.start()
            status, _ = ask(url, "body", text, timeout=120)
            took = time.perf_counter() - start
            side.join(timeout=120)
            print(f"\nPOST of {len(text):,} chars of \\\" never closed: {status} in {took:.2f} s; "
                  f"/index.json meanwhile: {waits[0]:.2f} s" if waits else "/index.json did not answer")
        finally:
            stop_server(process)
    print("\nOK: nothing got out." if not failures else f"\nFAILED: {failures} answers or connections got out.")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
