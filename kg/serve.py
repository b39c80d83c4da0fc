"""Serve: a read-only SPARQL 1.1 endpoint, a query page and the explorer of one graph, in one process.

``kg serve graphs/NAME`` opens the store ``kg build`` wrote (``graphs/NAME.oxigraph``)
read-only and answers:

================================  =====================================================
``/``                             the explorer (:mod:`kg.viz`); its panel and search use the routes below
``/query``                        a SPARQL editor with the example queries and a results table
``/sparql``                       SPARQL 1.1 Protocol: GET ``?query=``, POST a form or ``application/sparql-query``
``/entity/ID``, ``/paper/ID``     a node's page; ``ID`` is a node id (``method/grpo``) or an IRI's tail
``/search.json?q=``               entities and papers whose name or alias contains ``q``
``/neighbourhood.json?id=&k=``    the nodes within ``k`` links of a node, laid out for the explorer
``/related.json?id=``             :func:`kg.related.related`'s methods for an entity
``/static/NAME``                  the pages' script and style (nothing is fetched from elsewhere)
================================  =====================================================

Every HTML page has a JSON twin built by the same view: ``/index.json``,
``/query.json``, ``/entity/ID.json``, ``/paper/ID.json``.

How it is put together, and why:

- A plain WSGI application (:class:`App`) served by :mod:`wsgiref` with a
  thread per request; ``kg serve --get PATH`` calls the same application
  in-process, so tests and scripts exercise the real thing.
- Client SPARQL runs in worker processes (:class:`QueryPool`), each holding the
  store open read-only. pyoxigraph evaluates a query in native code that no
  Python thread can interrupt, but a process can be killed: a query that
  outlives its deadline is answered with a 503 and its worker replaced.
  Results are capped while they are read out.
- The pages' own lookups (an entity's evidence, a paper's mentions) are small
  indexed queries run in the server process; kg.related, which reads the
  whole graph, runs in a worker under the time limit. The explorer, search
  and neighbourhoods use a light networkx graph of the store (kinds, labels,
  aliases, role edges), built once, in the background from start-up.
"""
from __future__ import annotations

import functools
import importlib
import itertools
import json
import multiprocessing
import os
import re
import resource
import signal
import socket
import socketserver
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.util import setup_testing_defaults

import networkx as nx
import pyoxigraph as ox

from . import vocab
from .errors import KGError
from .store import (PREFIXES, STORE_SUFFIX, NotAcceptable, QueryRefused, examples, fill_store, graph_file,
                    open_graph, refuse_federation, serialize_results, store_dir)

#: Worker processes answering SPARQL. Each may run one query at a time.
POOL_SIZE = 2
#: Workers kept for short queries while the others are busy, and the seconds a query may run on one.
SPARE_WORKERS = 1
BUSY_LIMIT = 1.0
#: Seconds a request waits for a free worker before it is told the server is busy.
QUEUE_WAIT = 2.0
#: Address space a worker may use (kg serve --worker-memory): its engine and spaCy take about
#: 0.8 GB of it before any query runs (bench/serve_latency.py prints the figure).
WORKER_MEMORY = 2048 << 20
#: Seconds a new worker may take to start (import kg and spaCy, open its engine: about 3 s). Not
#: counted in a query's time limit, which is about evaluating it.
STARTUP_LIMIT = 60.0
MAX_BODY = 1 << 20  # bytes of a POSTed query
SEARCH_LIMIT = 20
NEIGHBOURHOOD_LIMIT = 250  # nodes a focused view draws at most (the layout is computed here)
EVIDENCE_LIMIT = 200  # pieces of evidence an entity's panel lists
PAPERS_LIMIT = 300  # papers an entity's page lists
LOOPBACK = {"127.0.0.1", "localhost", "::1"}

ROLE_PROPERTIES = " ".join(f"kg:{role}" for role in vocab.ROLES)
ENTITY_CLASSES = " ".join(f"kg:{kind}" for kind in vocab.ENTITY_TYPES)
KIND_OF_SEGMENT = {kind.lower(): kind for kind in vocab.ENTITY_TYPES}
# A kg node's IRI ends in TYPE/KEY (vocab mints them so); that tail is its id here.
_TAIL = re.compile(r"(?:paper|task|method|dataset|metric|model)/[^/#?]+$")
# An update starts, after its prologue, with one of these words; queries never do.
# A comment runs to the end of its line: a word inside one ("papers that address a task, with...") is no keyword.
_UPDATE = re.compile(r"^(?:\s|#[^\n]*(?:\n|$))*(?:(?:PREFIX\s*[\w.-]*:\s*<[^>]*>|BASE\s*<[^>]*>)(?:\s|#[^\n]*(?:\n|$))*)*"
                     r"(?:INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b", re.I)


class HTTPError(KGError):
    """An error answered to the client with ``status`` and a message meant for its user."""

    def __init__(self, status: int, message: str, *, headers: dict | None = None):
        self.status, self.headers = status, headers or {}
        super().__init__(message)


class QueryTimeout(HTTPError):
    def __init__(self, message: str):
        super().__init__(503, message)


class ServerBusy(HTTPError):
    """Every query worker is taken: the client should try again (the reply says when)."""

    def __init__(self, message: str):
        super().__init__(503, message, headers={"Retry-After": "2"})


# ------------------------------------------------------------------- results

#: ``?format=NAME`` stands for an Accept header: a download link cannot set headers.
FORMAT_NAMES = {"json": "application/sparql-results+json, application/ld+json",
                "xml": "application/sparql-results+xml, application/rdf+xml",
                "csv": "text/csv", "tsv": "text/tab-separated-values", "turtle": "text/turtle",
                "ttl": "text/turtle", "nt": "application/n-triples", "ntriples": "application/n-triples",
                "jsonld": "application/ld+json", "rdfxml": "application/rdf+xml"}




def result_reply(result, request: dict) -> dict:
    """The reply a worker sends for a query's ``result``: ``status``, ``type`` (Content-Type),
    ``body`` and ``truncated``, in the format the request's ``accept`` prefers, capped at its
    ``max_results``. Raises ``NotAcceptable`` as :func:`kg.store.serialize_results` does."""
    media, body, truncated = serialize_results(result, request.get("accept", ""), max_results=request["max_results"])
    return {"status": 200, "type": media, "body": body, "truncated": truncated}


def _error_reply(status: int, message: str) -> dict:
    body = json.dumps({"status": status, "error": message}).encode("utf-8")
    return {"status": status, "type": "application/json", "body": body, "truncated": False}


def _related_reply(store: ox.Store, request: dict) -> dict:
    """kg.related's answer for the entity labelled ``request["label"]``, as JSON."""
    from .related import related

    try:
        _, found = related(store, request["label"], k=request.get("k", 5))
    except KGError:  # a label kg.related resolves to no entity
        found = []
    body = json.dumps([{"label": r.label, "type": r.type, "score": r.score, "reason": r.reason()} for r in found])
    return {"status": 200, "type": "application/json", "body": body.encode("utf-8"), "truncated": False}


def oxigraph_engine(path: str, related: bool = True):
    """A function answering query requests from the graph at ``path`` (its store opened
    read-only, or its RDF file loaded: :func:`kg.store.open_graph`).

    It runs in a :class:`QueryPool` worker process: a request is a dict with
    ``query``, ``accept``, ``max_results`` and optionally ``bindings`` (variable
    name -> a literal's text, substituted), ``default_graph`` and
    ``named_graphs`` (lists of IRIs); the answer is a reply of :func:`result_reply`.
    With ``related``, a request ``{"task": "related", "label": ..., "k": ...}``
    asks for :func:`kg.related.related` instead, under the same time limit.
    """
    store = open_graph(path)
    if related:
        # kg.related imports spaCy, which takes seconds: while the worker starts (not counted in any
        # query's time limit) rather than within a related request's.
        importlib.import_module("kg.related")

    def answer(request: dict) -> dict:
        if related and request.get("task") == "related":
            return _related_reply(store, request)
        graphs = {key: [ox.NamedNode(iri) for iri in request[key]] for key in ("default_graph", "named_graphs")
                  if request.get(key)}
        substitutions = {ox.Variable(name): ox.Literal(value) for name, value in request.get("bindings", {}).items()}
        try:
            refuse_federation(request["query"])  # the server checks too: this worker never reaches out either
            result = store.query(request["query"], prefixes=PREFIXES, substitutions=substitutions or None, **graphs)
            return result_reply(result, request)
        except NotAcceptable as error:
            return _error_reply(406, str(error))
        except QueryRefused as error:
            return _error_reply(403, str(error))
        except SyntaxError as error:
            return _error_reply(400, f"Invalid SPARQL: {error}")
        except (ValueError, RuntimeError, OSError) as error:  # bad IRIs, evaluation errors
            return _error_reply(400, f"Query failed: {error}")

    return answer


def query_within(graph, query: str, bindings: dict[str, str] | None = None, *, timeout: float = 10.0):
    """Run ``query`` on ``graph`` (as :func:`kg.store.open_graph` takes it) in a worker process
    stopped after ``timeout`` seconds: ``kg query``'s engine.

    Returns what :func:`kg.store.run_query` returns, with the same ``bindings``;
    raises ``KGError`` with the reason when the query is refused, invalid, or
    out of time or memory.
    """
    refuse_federation(query)
    if store_dir(graph) is None:
        graph_file(graph)  # raises GraphNotFound before a worker is started
    pool = QueryPool(oxigraph_engine, str(graph), False, size=1, spare=0, timeout=timeout)
    try:
        reply = pool.run({"query": query, "bindings": bindings or {}, "max_results": None,
                          "accept": "application/sparql-results+json, application/n-triples"})
    except HTTPError as error:
        raise KGError(str(error).replace("(kg serve --timeout)", "(kg query --timeout)")) from None
    finally:
        pool.close()
    if reply["status"] != 200:
        raise KGError(json.loads(reply["body"])["error"])
    if reply["type"].startswith("application/n-triples"):  # CONSTRUCT, DESCRIBE
        return list(ox.parse(reply["body"], format=ox.RdfFormat.N_TRIPLES))
    return ox.parse_query_results(reply["body"], format=ox.QueryResultsFormat.JSON)


# --------------------------------------------------------------- worker pool


def _worker(conn, engine, args, memory_limit: int | None) -> None:
    """A worker process: cap its memory, make the engine, say whether it is ready, then answer
    requests until the pipe closes."""
    # Ctrl-C in a terminal reaches the whole process group; the server stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    if memory_limit is not None:
        # One query (a cross join under ORDER BY, say) could otherwise take the machine's memory.
        # Past the cap an allocation fails and the worker dies; the server answers 503 and replaces it.
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        os.environ["RUST_BACKTRACE"] = "0"  # the engine's failed allocation: one line in the log, not a backtrace
    try:
        answer = engine(*args)
    except Exception as error:  # noqa: BLE001 - reported to the server, which says what failed
        conn.send({"ready": False, "error": f"{type(error).__name__}: {error}"})
        return
    conn.send({"ready": True})
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = answer(request)
        except MemoryError:
            reply = _error_reply(503, _OUT_OF_MEMORY.format(limit=_megabytes(memory_limit)))
        except Exception as error:  # noqa: BLE001 - one bad query must not stop the worker
            reply = _error_reply(500, f"Query failed: {type(error).__name__}: {error}")
        conn.send(reply)


_OUT_OF_MEMORY = ("The query worker stopped: the query needed more than the {limit} of memory a worker may use "
                  "(kg serve --worker-memory). Narrow its patterns, add a LIMIT, or avoid ORDER BY over a large join.")


def _megabytes(limit: int | None) -> str:
    return "unlimited amount" if limit is None else f"{limit // (1 << 20)} MB"


def _exit_with_parent(parent: int) -> None:
    """End this worker once its server is gone (killed, say), even in the middle of a query:
    pyoxigraph releases the GIL while it evaluates, so this thread still runs."""
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


@dataclass(eq=False)  # hashed by identity: the pool keeps a set of them
class _Worker:
    process: multiprocessing.Process
    conn: object
    spare: bool  # kept for short queries while the others are busy
    ready: bool = False


class QueryPool:
    """Worker processes that each answer one query at a time, within a deadline.

    ``engine(*args)`` runs in each worker and returns the function answering a
    request (see :func:`oxigraph_engine`). A worker that misses a deadline is
    killed, which stops its query wherever it is, and a new one is started in
    its place. Workers are started with ``spawn``: the server is threaded, and
    forking a threaded process can copy a lock some other thread holds. So, as
    with any spawned process, a script that starts a pool (or a server) must
    do so under ``if __name__ == "__main__":``.

    Long queries cannot starve short ones: besides its ``size`` workers the
    pool keeps ``spare`` workers that take a query only while all the others
    are busy, and then give it at most ``busy_limit`` seconds. A request that
    finds every worker busy waits at most ``queue_wait`` seconds for one, then
    is told the server is busy (:class:`ServerBusy`). Each worker's memory is
    capped at ``memory_limit`` bytes (None: no cap).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     nt = Path(folder) / "g.nt"
    ...     _ = nt.write_text('<https://e.org/a> <https://e.org/p> "x" .\\n', encoding="utf-8")
    ...     store = fill_store(nt, Path(folder) / "g.oxigraph")
    ...     pool = QueryPool(oxigraph_engine, str(store), size=1, spare=0, timeout=30)
    ...     reply = pool.run({"query": "SELECT ?o { ?s ?p ?o }", "accept": "text/csv", "max_results": 10})
    ...     pool.close()
    >>> reply["body"]
    b'o\\r\\nx\\r\\n'
    """

    def __init__(self, engine, *args, size: int = POOL_SIZE, spare: int = SPARE_WORKERS, timeout: float = 10.0,
                 busy_limit: float = BUSY_LIMIT, queue_wait: float = QUEUE_WAIT,
                 memory_limit: int | None = WORKER_MEMORY):
        if size < 1 or spare < 0:
            raise ValueError(f"A pool needs at least one worker and no negative spares, got size={size}, spare={spare}.")
        self.engine, self.args, self.size, self.spare = engine, args, size, spare
        self.timeout, self.busy_limit, self.queue_wait, self.memory_limit = timeout, busy_limit, queue_wait, memory_limit
        self._context = multiprocessing.get_context("spawn")
        self._free: list[_Worker] = []  # idle workers, spares among them
        self._workers: set[_Worker] = set()
        self._changed = threading.Condition()
        self._closed = False
        for number in range(size + spare):
            self._release(self._start(spare=number >= size))

    def _start(self, *, spare: bool) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_worker, args=(theirs, self.engine, self.args, self.memory_limit),
                                        name="kg-query-worker", daemon=True)
        process.start()
        theirs.close()
        worker = _Worker(process, ours, spare)
        with self._changed:
            self._workers.add(worker)
        return worker

    def _stop(self, worker: _Worker) -> None:
        worker.process.kill()
        worker.process.join(timeout=5)
        worker.conn.close()
        with self._changed:
            self._workers.discard(worker)

    def _release(self, worker: _Worker) -> None:
        with self._changed:
            self._free.append(worker)
            self._changed.notify_all()

    def _acquire(self, wait: float) -> _Worker:
        """A free worker, a regular one if any is free; waits at most ``wait`` seconds."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._free, timeout=wait):
                raise ServerBusy(f"All {self.size + self.spare} query workers are busy with long queries "
                                 f"(each may run {self.timeout:g} s, kg serve --timeout); try again shortly.")
            worker = min(self._free, key=lambda w: w.spare)
            self._free.remove(worker)
            return worker

    @property
    def busy(self) -> int:
        """How many workers are answering a request now."""
        with self._changed:
            return len(self._workers) - len(self._free)

    def wait_ready(self, timeout: float) -> None:
        """Wait until every worker has opened its engine (a benchmark's warm-up)."""
        deadline = time.monotonic() + timeout
        workers = [self._acquire(max(0.0, deadline - time.monotonic())) for _ in range(self.size + self.spare)]
        try:
            for worker in workers:
                self._ensure_ready(worker, deadline)
        finally:
            for worker in workers:
                self._release(worker)

    def _ensure_ready(self, worker: _Worker, deadline: float) -> None:
        if worker.ready:
            return
        if not worker.conn.poll(max(0.0, deadline - time.monotonic())):
            raise QueryTimeout("The query worker did not start in time; try again.")
        hello = worker.conn.recv()
        if not hello["ready"]:
            raise KGError(f"The query worker could not open the graph: {hello['error']}")
        worker.ready = True

    def run(self, request: dict, *, timeout: float | None = None) -> dict:
        """Answer ``request`` in a worker within ``timeout`` seconds (default: the pool's).

        The time counts from when a worker gets the request: a worker still
        starting has up to :data:`STARTUP_LIMIT` more. A spare worker gives it
        at most ``busy_limit`` seconds. Raises ``QueryTimeout`` when the worker
        does not answer in time, ``ServerBusy`` when no worker is free within
        ``queue_wait`` seconds or the query outgrew a spare's limit.
        """
        timeout = self.timeout if timeout is None else timeout
        worker = self._acquire(min(timeout, self.queue_wait))
        limit = min(timeout, self.busy_limit) if worker.spare else timeout
        healthy = False
        try:
            self._ensure_ready(worker, time.monotonic() + STARTUP_LIMIT)
            deadline = time.monotonic() + limit
            worker.conn.send(request)
            if not worker.conn.poll(max(0.0, deadline - time.monotonic())):
                if limit < timeout:
                    raise ServerBusy(f"All {self.size} query workers are busy with long queries, and while they are, "
                                     f"a query may run {limit:g} s only; this one took longer. Try again shortly.")
                raise QueryTimeout(f"Query stopped after the time limit of {timeout:g} s (kg serve --timeout). "
                                   "Narrow its patterns or add a LIMIT.")
            reply = worker.conn.recv()
            healthy = True
            return reply
        except (EOFError, OSError):  # the worker died: over its memory cap, or killed by the system
            raise HTTPError(503, _OUT_OF_MEMORY.format(limit=_megabytes(self.memory_limit))) from None
        finally:
            if healthy:
                self._release(worker)
            else:  # killing the process is what stops a query pyoxigraph is still evaluating
                self._stop(worker)
                if not self._closed:
                    self._release(self._start(spare=worker.spare))

    def close(self) -> None:
        """Stop every worker, busy or not."""
        self._closed = True
        with self._changed:
            workers = list(self._workers)
        for worker in workers:
            self._stop(worker)


# ------------------------------------------------------------- graph index


@dataclass
class GraphIndex:
    """The store as a light networkx graph for the explorer, search and neighbourhoods.

    Node ids are IRI tails (``method/grpo``, ``paper/abc``); nodes carry the
    attributes :func:`kg.viz.render.render_html` reads, except papers'
    abstracts, which pages fetch when they show one.
    """

    graph: nx.MultiDiGraph
    iri: dict[str, str]  # node id -> IRI
    names: list[tuple[str, str, str]] = field(default_factory=list)  # (casefolded name, name, node id)
    by_label: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, label) -> node id


def node_id(iri: str) -> str | None:
    """The id of a kg node: the tail of its IRI (None for IRIs kg does not mint).

    >>> node_id("https://w3id.org/kg/id/method/grpo"), node_id("https://schema.org/url")
    ('method/grpo', None)
    """
    match = _TAIL.search(iri)
    return match.group(0) if match else None


def load_index(store: ox.Store) -> GraphIndex:
    """Read the nodes, names and role edges of the graph in ``store``."""
    G, iris = nx.MultiDiGraph(), {}
    index = GraphIndex(G, iris)

    def add(iri: str, **data) -> str | None:
        node = node_id(iri)
        if node is not None:
            iris[node] = iri
            G.add_node(node, **data)
        return node

    for row in store.query(f"""SELECT ?e ?class ?label ?papers WHERE {{
            ?e a ?class ; skos:prefLabel ?label . VALUES ?class {{ {ENTITY_CLASSES} }}
            OPTIONAL {{ ?e kg:paperCount ?papers }} }}""", prefixes=PREFIXES):
        kind = row["class"].value.rsplit("#", 1)[-1]
        node = add(row["e"].value, kind=kind, label=row["label"].value, aliases=[],
                   papers=int(row["papers"].value) if row["papers"] else 0)
        if node is not None:
            index.by_label.setdefault((kind, row["label"].value), node)
    for row in store.query("SELECT ?e ?alias WHERE { ?e skos:altLabel ?alias }", prefixes=PREFIXES):
        node = node_id(row["e"].value)
        if node in G:
            G.nodes[node]["aliases"].append(row["alias"].value)
    for row in store.query("""SELECT ?p ?label ?title ?venue ?date WHERE { ?p a kg:Paper ; rdfs:label ?label .
            OPTIONAL { ?p dcterms:title ?title } OPTIONAL { ?p kg:venue ?venue } OPTIONAL { ?p dcterms:date ?date } }""",
                           prefixes=PREFIXES):
        add(row["p"].value, kind="Paper", label=row["label"].value, title=_value(row["title"]),
            venue=_value(row["venue"]), year=_value(row["date"]), abstract="", url="", authors=[])
    for row in store.query(f"SELECT ?p ?property ?e WHERE {{ VALUES ?property {{ {ROLE_PROPERTIES} }} ?p ?property ?e }}",
                           prefixes=PREFIXES):
        paper, entity = node_id(row["p"].value), node_id(row["e"].value)
        if paper in G and entity in G:
            role = row["property"].value.rsplit("#", 1)[-1]
            G.add_edge(paper, entity, key=role, role=role)
    for node, data in G.nodes(data=True):
        names = [data.get("title") or data["label"]] + list(data.get("aliases", ()))
        index.names += [(" ".join(name.split()).casefold(), name, node) for name in dict.fromkeys(names) if name]
    return index


def _value(term) -> str:
    return term.value if term is not None else ""


def resolve_node(index: GraphIndex, raw: str) -> str | None:
    """The node a URL names, or None.

    ``raw`` is a node id as it appears in a URL path: an IRI's tail,
    percent-encoded (``method/group-relative-policy-optimization``,
    ``paper/a%20b``); a resolution key as written (``method/group relative
    policy optimization``), minted into an id the way :mod:`kg.vocab` mints
    IRIs; or, for people typing URLs, ``TYPE/NAME`` with a label or alias
    (``method/grpo``; case ignored; the entity with most papers wins).
    """
    if raw in index.graph:
        return raw
    segment, _, rest = raw.partition("/")
    key = unquote(rest)
    if segment == "paper":
        candidate = str(vocab.paper_iri("", key))
    elif segment in KIND_OF_SEGMENT:
        candidate = str(vocab.entity_iri("", KIND_OF_SEGMENT[segment], key))
    else:
        return None
    if candidate in index.graph:
        return candidate
    named = " ".join(key.split()).casefold()
    matches = [node for folded, _, node in index.names
               if folded == named and index.graph.nodes[node]["kind"].lower() == segment]
    return max(matches, key=lambda n: (index.graph.nodes[n].get("papers", 0), n), default=None)


def search(index: GraphIndex, text: str, *, limit: int = SEARCH_LIMIT) -> list[dict]:
    """Nodes whose label, title or alias contains ``text`` (case ignored): exact names first,
    then names starting with it, then the rest; entities mentioned by more papers first."""
    wanted = " ".join(text.split()).casefold()
    if not wanted:
        return []
    best: dict[str, tuple] = {}
    for folded, name, node in index.names:
        at = folded.find(wanted)
        if at < 0:
            continue
        data = index.graph.nodes[node]
        rank = (0 if folded == wanted else 1 if at == 0 else 2, -data.get("papers", 0), len(name), name)
        if node not in best or rank < best[node][0]:
            best[node] = (rank, name)
    found = sorted(best.items(), key=lambda item: item[1][0])[:limit]
    return [{"id": node, "name": name, "label": index.graph.nodes[node]["label"],
             "kind": index.graph.nodes[node]["kind"], "papers": index.graph.nodes[node].get("papers", 0)}
            for node, (_, name) in found]


def neighbourhood(G: nx.MultiDiGraph, node: str, hops: int, *, limit: int = NEIGHBOURHOOD_LIMIT) -> tuple[list, int]:
    """The nodes at most ``hops`` links from ``node`` (either direction), nearest first and, at
    each distance, the most mentioned first; at most ``limit`` of them. Also returns how many
    were left out.

    >>> G = nx.MultiDiGraph([("paper/1", "task/a"), ("paper/2", "task/a"), ("paper/2", "task/b")])
    >>> neighbourhood(G, "task/b", 2), neighbourhood(G, "task/b", 2, limit=2)
    ((['task/b', 'paper/2', 'task/a'], 0), (['task/b', 'paper/2'], 1))
    """
    order, seen, frontier, left_out = [node], {node}, [node], 0
    weight = lambda n: (-G.nodes[n].get("papers", 0), -G.degree(n), n)  # noqa: E731
    for _ in range(hops):
        following = []
        for current in frontier:
            for other in sorted(set(G.predecessors(current)) | set(G.successors(current)), key=weight):
                if other in seen:
                    continue
                seen.add(other)
                if len(order) < limit:
                    order.append(other)
                    following.append(other)
                else:
                    left_out += 1
        frontier = following
    return order, left_out


# -------------------------------------------------------------------- views

# The query behind an entity's panel: the link under the panel opens it on /query.
ENTITY_EVIDENCE = """# The evidence behind every edge to one entity: the paper, its role, the sentence and the mention's offsets.
SELECT ?paper ?title ?role ?sentence ?start ?end
WHERE {
  ?statement a kg:Statement ; rdf:subject ?paper ; rdf:predicate ?property ; rdf:object ?entity ;
             kg:sentence ?sentence ; oa:hasSelector ?position .
  ?position a oa:TextPositionSelector ; oa:start ?start ; oa:end ?end .
  ?paper a kg:Paper ; rdfs:label ?title .
  BIND(STRAFTER(STR(?property), "#") AS ?role)
}
ORDER BY ?title ?start"""
PAPER_MENTIONS = """# What one paper mentions: each mention's entity, its type, the paper's role and the offsets in the abstract.
SELECT ?entity ?label ?type ?role ?start ?end
WHERE {
  ?statement a kg:Statement ; rdf:subject ?paper ; rdf:predicate ?property ; rdf:object ?entity ;
             oa:hasSelector ?position .
  ?position a oa:TextPositionSelector ; oa:start ?start ; oa:end ?end .
  ?entity skos:prefLabel ?label ; a ?class .
  VALUES ?class { kg:Task kg:Method kg:Dataset kg:Metric kg:Model }
  BIND(STRAFTER(STR(?property), "#") AS ?role)
  BIND(STRAFTER(STR(?class), "#") AS ?type)
}
ORDER BY ?start ?label"""
ENTITY_RELATIONS = """SELECT ?subject ?relation ?object ?subjectLabel ?objectLabel (COUNT(DISTINCT ?paper) AS ?papers)
WHERE {
  { ?statement rdf:subject ?entity } UNION { ?statement rdf:object ?entity }
  ?statement a kg:Statement ; rdf:subject ?subject ; rdf:predicate ?property ; rdf:object ?object ;
             prov:wasDerivedFrom ?paper .
  ?subject skos:prefLabel ?subjectLabel .
  ?object skos:prefLabel ?objectLabel .
  BIND(STRAFTER(STR(?property), "#") AS ?relation)
}
GROUP BY ?subject ?relation ?object ?subjectLabel ?objectLabel
ORDER BY DESC(?papers) ?relation ?subjectLabel ?objectLabel"""
ENTITY_RESULTS = """SELECT ?paper ?value ?unit ?previous ?kind ?metric ?dataset ?subject ?sentence
WHERE {
  { ?result kg:onDataset ?entity } UNION { ?result kg:achievedBy ?entity } UNION { ?result kg:ofMetric ?entity }
  ?result a kg:Result ; kg:value ?value ; kg:resultKind ?kind ; kg:sentence ?sentence ; prov:wasDerivedFrom ?paper .
  OPTIONAL { ?result kg:unit ?unit } OPTIONAL { ?result kg:previousValue ?previous }
  OPTIONAL { ?result kg:ofMetric/skos:prefLabel ?metric } OPTIONAL { ?result kg:onDataset/skos:prefLabel ?dataset }
  OPTIONAL { ?result kg:achievedBy/skos:prefLabel ?subject }
}
ORDER BY ?dataset ?metric DESC(?value)"""
PAPER_FIELDS = """SELECT ?paper ?label ?abstract ?title ?venue ?date ?url WHERE {
  ?paper rdfs:label ?label ; dcterms:abstract ?abstract .
  OPTIONAL { ?paper dcterms:title ?title } OPTIONAL { ?paper kg:venue ?venue }
  OPTIONAL { ?paper dcterms:date ?date } OPTIONAL { ?paper schema:url ?url } }"""


def with_values(query: str, variable: str, term) -> str:
    """``query`` with ``VALUES ?variable { term }`` opening its WHERE clause.

    This is how the shared queries (the example queries, a panel's query) are
    made standalone: the term is written by pyoxigraph in N-Triples syntax,
    escapes included, never pasted in from text.

    >>> print(with_values("SELECT ?x WHERE { ?x ?p ?name }", "name", ox.Literal('a "b"')))
    SELECT ?x WHERE {
      VALUES ?name { "a \\"b\\"" }
     ?x ?p ?name }
    """
    # Comment lines may hold any text, braces and "where" included: look past them.
    masked = re.sub(r"(?m)^[ \t]*#[^\n]*", lambda comment: " " * len(comment.group()), query)
    match = re.search(r"\bWHERE\s*\{", masked, re.I) or re.search(r"\{", masked)
    if match is None:
        raise ValueError("The query has no WHERE clause to bind a value in.")
    return f"{query[:match.end()]}\n  VALUES ?{variable} {{ {term} }}\n{query[match.end():]}"


def example_queries() -> list[dict]:
    """The shipped example queries, their parameters bound to their defaults, ready to run."""
    shipped = []
    for example in examples().values():
        text = example.text
        for name, value in example.params.items():
            text = with_values(text, name, ox.Literal(value))
        shipped.append({"name": example.name, "description": example.description, "query": text})
    return shipped


def _urls(node: str, query: str | None = None) -> dict:
    page = f"/{node}" if node.startswith("paper/") else f"/entity/{node}"
    urls = {"html": page, "json": page + ".json", "explorer": "/?" + urlencode({"node": node})}
    if query is not None:
        urls["query"] = "/query?" + urlencode({"query": query})
    return urls


def _mark_in_sentence(abstract: str, sentence: str, start: int, end: int) -> tuple[int, int] | None:
    """The mention's offsets within ``sentence``, given its offsets in ``abstract`` (None if they disagree)."""
    at = abstract.find(sentence)
    while at >= 0:
        if at <= start and end <= at + len(sentence):
            return start - at, end - at
        at = abstract.find(sentence, at + 1)
    return None


def segments(text: str, spans) -> list[tuple[str, bool]]:
    """``text`` cut at ``spans`` (start, end): ``(piece, marked)`` pairs, overlapping spans skipped.

    >>> segments("We propose GRPO.", [(11, 15)])
    [('We propose ', False), ('GRPO', True), ('.', False)]
    """
    pieces, at = [], 0
    for start, end in sorted(spans):
        if start < at or end > len(text) or start >= end:
            continue
        pieces += [(text[at:start], False), (text[start:end], True)]
        at = end
    pieces.append((text[at:], False))
    return [piece for piece in pieces if piece[0]]


# --------------------------------------------------------------------- app


@dataclass
class Response:
    status: int
    body: bytes
    type: str
    headers: dict = field(default_factory=dict)


REASONS = {200: "OK", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 406: "Not Acceptable", 413: "Payload Too Large",
           415: "Unsupported Media Type", 500: "Internal Server Error", 503: "Service Unavailable"}
# Pages run only scripts and styles served here and fetch only from here.
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
DATA_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox"
STATIC = {"page.css": "text/css; charset=utf-8", "query.js": "text/javascript; charset=utf-8"}


class App:
    """The WSGI application serving one graph; see the module docstring for its routes.

    Parameters
    ----------
    graph : str or Path
        The graph: the ``-o`` path of ``kg build`` (``graphs/NAME``), one of its
        files, or its ``.oxigraph`` store.
    timeout : float, keyword-only
        Seconds a SPARQL query may run before it is stopped.
    max_results : int, keyword-only
        The most results (solutions or triples) a query returns.
    pool : QueryPool, optional, keyword-only
        The workers answering SPARQL; default: :data:`POOL_SIZE` workers on the
        graph's store, started on the first query.
    overview_nodes : int, keyword-only
        The most nodes the explorer opens on (its overview); search and
        neighbourhoods reach the others.
    worker_memory : int or None, keyword-only
        Bytes of address space each query worker may use (None: no cap); a
        query that needs more is answered with a 503.
    allowed_hosts : set of str, optional, keyword-only
        Host names requests may be addressed to (None: any). A server bound to a
        loopback address only answers requests for a loopback name, so that a web
        page cannot reach it through a DNS name rebound to 127.0.0.1.

    Examples
    --------
    >>> app = App("tests/fixtures/no-such-graph")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    kg.errors.GraphNotFound: No graph at tests/fixtures/no-such-graph ...
    """

    def __init__(self, graph, *, timeout: float = 10.0, max_results: int = 10_000, pool: QueryPool | None = None,
                 overview_nodes: int = 400, allowed_hosts: set[str] | None = None,
                 worker_memory: int | None = WORKER_MEMORY):
        if timeout <= 0 or max_results < 1:
            raise KGError(f"--timeout must be positive and --max-results at least 1 (got {timeout}, {max_results}).")
        self.timeout, self.max_results, self.allowed_hosts = timeout, max_results, allowed_hosts
        self.worker_memory = worker_memory
        self.overview_nodes = overview_nodes
        self._scratch = None
        folder = store_dir(graph)
        if folder is None:  # no store beside the files: load the RDF into a temporary one
            rdf = graph_file(graph)
            self._scratch = tempfile.TemporaryDirectory(prefix="kg-serve-")
            folder = fill_store(rdf, Path(self._scratch.name) / (rdf.stem + STORE_SUFFIX))
        self.store_path = str(folder)
        self.title = Path(folder).name.removesuffix(STORE_SUFFIX)
        self.store = ox.Store.read_only(self.store_path)
        self._pool = pool
        # One lock each: building the index (seconds on a large graph) must not hold up queries.
        self._pool_lock, self._index_lock, self._page_lock = threading.Lock(), threading.Lock(), threading.Lock()
        self._index: GraphIndex | None = None
        self._explorer: bytes | None = None
        from .viz import render  # the pages' templates live with the explorer's

        self._render = render
        self._templates = render._environment()
        self._templates.globals["highlight"] = lambda text, mentions: segments(
            text, [(m["start"], m["end"]) for m in mentions])
        self._related: dict[str, dict] = {}

    # ----------------------------------------------------------- lifecycle

    @property
    def pool(self) -> QueryPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = QueryPool(oxigraph_engine, self.store_path, timeout=self.timeout,
                                       memory_limit=self.worker_memory)
            return self._pool

    def index(self) -> GraphIndex:
        with self._index_lock:
            if self._index is None:
                self._index = load_index(self.store)
            return self._index

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        if self._scratch is not None:
            del self.store
            self._scratch.cleanup()

    # ------------------------------------------------------------------ WSGI

    def __call__(self, environ, start_response):
        response = self.respond(environ)
        body = b"" if environ.get("REQUEST_METHOD") == "HEAD" else response.body
        headers = {"Content-Type": response.type, "Content-Length": str(len(response.body)),
                   "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                   "X-Frame-Options": "DENY", "Cross-Origin-Opener-Policy": "same-origin",
                   "Cache-Control": "no-cache",
                   "Content-Security-Policy": PAGE_CSP if response.type.startswith("text/html") else DATA_CSP,
                   **response.headers}
        start_response(f"{response.status} {REASONS.get(response.status, 'Error')}", list(headers.items()))
        return [body]

    def respond(self, environ) -> Response:
        """The response to one request; every error becomes an error page, never a traceback."""
        raw = environ.get("RAW_URI") or quote(environ.get("PATH_INFO", "/").encode("latin-1").decode("utf-8", "replace"))
        path = urlsplit(raw).path or "/"
        wants_json = path.endswith(".json") or path == "/sparql"
        try:
            self._check_host(environ)
            return self.route(environ, path)
        except HTTPError as error:
            response = self._error(error.status, str(error), wants_json)
            response.headers.update(error.headers)
            return response
        except KGError as error:
            return self._error(400, str(error), wants_json)
        except Exception:  # noqa: BLE001 - logged for the operator; the client gets a plain message
            traceback.print_exc(file=sys.stderr)
            return self._error(500, "Internal error; the server's log has the details.", wants_json)

    def _check_host(self, environ) -> None:
        if self.allowed_hosts is None:
            return
        host = environ.get("HTTP_HOST", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name.strip("[]").lower() not in self.allowed_hosts:
            raise HTTPError(400, f"Unexpected Host {host!r}: this server answers requests for "
                                 f"{', '.join(sorted(self.allowed_hosts))} only (kg serve --host).")

    def route(self, environ, path: str) -> Response:
        method = environ.get("REQUEST_METHOD", "GET")
        params = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
        if path == "/sparql":
            return self.sparql(environ, method, params)
        if method not in ("GET", "HEAD"):
            raise HTTPError(405, f"{method} is not allowed here; only /sparql takes POST.")
        get = lambda name, default="": params.get(name, [default])[0]  # noqa: E731
        if path == "/":
            return Response(200, self.explorer_page(), "text/html; charset=utf-8",
                            {"Content-Security-Policy": self._render.page_csp(served=True) + "; frame-ancestors 'none'"})
        if path == "/favicon.ico":
            return Response(204, b"", "image/x-icon")
        if path.startswith("/static/"):
            return self.static(path[len("/static/"):])
        if path == "/search.json":
            return self._json({"query": get("q"), "results": search(self.index(), get("q"))})
        if path == "/neighbourhood.json":
            return self._json(self.neighbourhood_view(get("id"), get("k", "1")))
        if path == "/related.json":
            return self._json({"id": get("id"), **self.related_view(self._node(get("id")))})
        if path == "/index.json":  # the explorer's twin
            return self._json(self.index_view())
        if path in ("/query", "/query.json"):
            view = self.query_view(get("query"))
            return self._json(view) if path.endswith(".json") else self._page("query.html", view)
        if path.startswith("/entity/"):
            return self.node_page(path[len("/entity/"):], with_related=get("related", "1") != "0")
        if path.startswith("/paper/"):
            return self.node_page(path[1:])
        raise HTTPError(404, f"Nothing at {path}. Try / (the explorer), /query or /sparql.")

    # ------------------------------------------------------------- responses

    def _json(self, value, status: int = 200) -> Response:
        return Response(status, json.dumps(value, ensure_ascii=False).encode("utf-8"), "application/json")

    def _page(self, template: str, view: dict, status: int = 200) -> Response:
        html = self._templates.get_template(template).render(view=view, graph_title=self.title)
        return Response(status, html.encode("utf-8"), "text/html; charset=utf-8")

    def _error(self, status: int, message: str, wants_json: bool) -> Response:
        if wants_json:
            return self._json({"status": status, "error": message}, status)
        return self._page("error.html", {"status": status, "reason": REASONS.get(status, "Error"),
                                         "message": message}, status)

    def static(self, name: str) -> Response:
        # Only the files named in STATIC exist here: no path from the URL reaches the file system.
        if name not in STATIC:
            raise HTTPError(404, "No such file.")
        return Response(200, (self._render.ASSETS / name).read_bytes(), STATIC[name])

    # ----------------------------------------------------------------- SPARQL

    def sparql(self, environ, method: str, params: dict) -> Response:
        """The SPARQL 1.1 Protocol's query operation; updates are refused."""
        if method == "POST":
            params = self._post_params(environ, params)
        elif method not in ("GET", "HEAD"):
            raise HTTPError(405, f"{method} is not allowed on /sparql; use GET or POST.")
        if "update" in params:
            raise HTTPError(403, "This endpoint is read-only: SPARQL Update is refused. "
                                 "To change the graph, rebuild it with 'kg build'.")
        queries = params.get("query", [])
        if len(queries) != 1 or not queries[0].strip():
            raise HTTPError(400, "Give exactly one SPARQL query: GET /sparql?query=..., or POST it as a form "
                                 "field 'query' or with Content-Type application/sparql-query.")
        query = queries[0]
        if _UPDATE.match(query):
            raise HTTPError(403, "This endpoint is read-only: SPARQL Update (INSERT, DELETE, LOAD, CLEAR, DROP...) "
                                 "is refused. To change the graph, rebuild it with 'kg build'.")
        try:
            refuse_federation(query)
        except QueryRefused as error:
            raise HTTPError(403, str(error)) from None
        fmt = params.get("format", [""])[0]
        if fmt and fmt not in FORMAT_NAMES:
            raise HTTPError(400, f"Unknown format {fmt!r}; choose one of {', '.join(FORMAT_NAMES)}.")
        accept = FORMAT_NAMES[fmt] if fmt else environ.get("HTTP_ACCEPT", "")
        reply = self.pool.run({"query": query, "accept": accept, "max_results": self.max_results,
                               "default_graph": params.get("default-graph-uri", []),
                               "named_graphs": params.get("named-graph-uri", [])})
        headers = {"Vary": "Accept"}
        if reply["truncated"]:
            headers["KG-Results-Truncated"] = f"first {self.max_results} results (kg serve --max-results)"
        if fmt and reply["status"] == 200:
            extension = {"json": "json", "jsonld": "jsonld", "ttl": "ttl", "turtle": "ttl", "ntriples": "nt"}.get(fmt, fmt)
            headers["Content-Disposition"] = f'attachment; filename="results.{extension}"'
        return Response(reply["status"], reply["body"], reply["type"], headers)

    def _post_params(self, environ, params: dict) -> dict:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise HTTPError(400, "Invalid Content-Length.") from None
        if length > MAX_BODY:
            raise HTTPError(413, f"The request body is {length} bytes; at most {MAX_BODY} are read.")
        body = environ["wsgi.input"].read(length) if length else b""
        kind = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise HTTPError(400, "The request body is not UTF-8.") from None
        if kind == "application/x-www-form-urlencoded":
            return {**params, **parse_qs(text, keep_blank_values=True)}
        if kind == "application/sparql-query":
            return {**params, "query": [text]}
        if kind == "application/sparql-update":
            return {**params, "update": [text]}
        raise HTTPError(415, f"Cannot read a body of type {kind or 'unknown'!r}; send "
                             "application/x-www-form-urlencoded or application/sparql-query.")

    # ------------------------------------------------------------------ views

    def explorer_page(self) -> bytes:
        index = self.index()
        with self._page_lock:
            if self._explorer is None:
                self._explorer = self._render.render_page(index.graph, title=self.title, max_nodes=self.overview_nodes,
                                                          served=True).encode("utf-8")
            return self._explorer

    def index_view(self) -> dict:
        G = self.index().graph
        kinds: dict[str, int] = {}
        for _, kind in G.nodes(data="kind"):
            kinds[kind] = kinds.get(kind, 0) + 1
        return {"title": self.title, "triples": len(self.store), "nodes": kinds, "edges": G.number_of_edges(),
                "urls": {"explorer": "/", "query": "/query", "sparql": "/sparql"}}

    def query_view(self, query: str = "") -> dict:
        return {"query": query, "endpoint": "/sparql", "examples": example_queries(),
                "prefixes": PREFIXES, "timeout": self.timeout, "max_results": self.max_results}

    def _node(self, raw: str) -> str:
        node = resolve_node(self.index(), raw)
        if node is None:
            raise HTTPError(404, f"No node {unquote(raw)!r} in this graph. Search for it at / or on /query.")
        return node

    def node_page(self, raw: str, *, with_related: bool = True) -> Response:
        index = self.index()
        # "ID.json" is the JSON twin, unless ID.json itself names a node (a key may end in ".json").
        is_json = raw.endswith(".json") and (resolve_node(index, raw[:-5]) is not None or resolve_node(index, raw) is None)
        node = self._node(raw[:-5] if is_json else raw)
        view = self.paper_view(node) if node.startswith("paper/") else self.entity_view(node, with_related=with_related)
        if is_json:
            return self._json(view)
        return self._page("paper.html" if view["type"] == "Paper" else "entity.html", view)

    def entity_view(self, node: str, *, with_related: bool = True) -> dict:
        """An entity: type, names, papers with roles, evidence sentences (mention offsets within
        each), its relations with other entities (with their support in papers), the results
        reported on it, by it or in it, related methods (unless ``with_related`` is false: the explorer's panel loads them
        apart, as they may take seconds), and the SPARQL query listing the evidence."""
        index = self.index()
        data, iri = index.graph.nodes[node], index.iri[node]
        query = with_values(ENTITY_EVIDENCE, "entity", ox.NamedNode(iri))
        evidence = []
        for row in itertools.islice(self.store.query(query, prefixes=PREFIXES), EVIDENCE_LIMIT):
            paper = node_id(row["paper"].value)
            start, end = int(row["start"].value), int(row["end"].value)
            marked = _mark_in_sentence(self._abstract(row["paper"].value), row["sentence"].value, start, end)
            evidence.append({"paper": paper, "title": row["title"].value, "role": row["role"].value,
                             "sentence": row["sentence"].value,
                             "start": marked[0] if marked else None, "end": marked[1] if marked else None})
        papers = {}
        for paper, _, role in index.graph.in_edges(node, keys=True):
            papers.setdefault(paper, []).append(role)
        listed = sorted(papers, key=lambda p: (min(vocab.ROLES.index(r) for r in papers[p]), index.graph.nodes[p]["label"]))
        relations = [{"subject": node_id(row["subject"].value), "subject_label": row["subjectLabel"].value,
                      "relation": row["relation"].value, "object": node_id(row["object"].value),
                      "object_label": row["objectLabel"].value, "papers": int(row["papers"].value)}
                     for row in itertools.islice(self.store.query(
                         with_values(ENTITY_RELATIONS, "entity", ox.NamedNode(iri)), prefixes=PREFIXES), EVIDENCE_LIMIT)]
        results = [{"paper": node_id(row["paper"].value), "value": float(row["value"].value),
                    "unit": _value(row["unit"]), "previous": float(row["previous"].value) if row["previous"] else None,
                    "kind": row["kind"].value, "metric": _value(row["metric"]), "dataset": _value(row["dataset"]),
                    "subject": _value(row["subject"]), "sentence": row["sentence"].value}
                   for row in itertools.islice(self.store.query(
                       with_values(ENTITY_RESULTS, "entity", ox.NamedNode(iri)), prefixes=PREFIXES), EVIDENCE_LIMIT)]
        view = {"id": node, "iri": iri, "type": data["kind"], "label": data["label"], "aliases": data["aliases"],
                "relations": relations, "results": results,
                "paper_count": data.get("papers", 0),
                "papers": [{"id": p, "title": index.graph.nodes[p]["label"],
                            "roles": sorted(papers[p], key=vocab.ROLES.index)} for p in listed[:PAPERS_LIMIT]],
                "papers_not_listed": max(0, len(listed) - PAPERS_LIMIT),
                "evidence": evidence, "sparql": query, "urls": _urls(node, query)}
        return {**view, **self.related_view(node)} if with_related else view

    def related_view(self, node: str) -> dict:
        """The methods :func:`kg.related.related` ranks for this entity, each with its node id.

        kg.related reads every edge of the graph on each call (seconds on a large
        graph, minutes for its hubs), so it runs in a query worker under the
        time limit. Answers are kept; running out of time is not (it may have
        been a busy moment).
        """
        if node not in self._related:
            index = self.index()
            try:
                reply = self.pool.run({"task": "related", "label": index.graph.nodes[node]["label"], "k": 5})
            except QueryTimeout:
                return {"related": [], "related_note": f"Finding related methods took longer than {self.timeout:g} s; "
                                                       "'kg related' on the command line takes its time."}
            found = json.loads(reply["body"]) if reply["status"] == 200 else []
            self._related[node] = {"related": [{"id": index.by_label.get((r["type"], r["label"])), **r} for r in found],
                                   "related_note": ""}
        return self._related[node]

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one App per process; abstracts never change while served
    def _abstract(self, paper_iri: str) -> str:
        rows = list(self.store.query("SELECT ?paper ?a WHERE { ?paper dcterms:abstract ?a }", prefixes=PREFIXES,
                                     substitutions={ox.Variable("paper"): ox.NamedNode(paper_iri)}))
        return rows[0]["a"].value if rows else ""

    def paper_view(self, node: str) -> dict:
        """A paper: its fields, its abstract with every mention's offsets, its entities, and the
        SPARQL query listing the mentions."""
        index = self.index()
        iri = ox.NamedNode(index.iri[node])
        fields = next(iter(self.store.query(PAPER_FIELDS, prefixes=PREFIXES, substitutions={ox.Variable("paper"): iri})))
        query = with_values(PAPER_MENTIONS, "paper", iri)
        mentions, entities = [], {}
        for row in self.store.query(query, prefixes=PREFIXES):
            entity = node_id(row["entity"].value)
            mentions.append({"entity": entity, "label": row["label"].value, "type": row["type"].value,
                             "role": row["role"].value, "start": int(row["start"].value), "end": int(row["end"].value)})
            item = entities.setdefault(entity, {"id": entity, "label": row["label"].value,
                                                "type": row["type"].value, "roles": []})
            if row["role"].value not in item["roles"]:
                item["roles"].append(row["role"].value)
        authors = sorted(row["a"].value for row in self.store.query(
            "SELECT ?paper ?a WHERE { ?paper dcterms:creator ?a }", prefixes=PREFIXES, substitutions={ox.Variable("paper"): iri}))
        return {"id": node, "iri": iri.value, "type": "Paper", "label": fields["label"].value,
                "title": _value(fields["title"]), "venue": _value(fields["venue"]), "year": _value(fields["date"]),
                "url": _value(fields["url"]), "authors": authors, "abstract": fields["abstract"].value,
                "mentions": mentions,
                "entities": sorted(entities.values(), key=lambda e: (vocab.ROLES.index(e["roles"][0]), e["label"])),
                "sparql": query, "urls": _urls(node, query)}

    def neighbourhood_view(self, raw: str, hops: str) -> dict:
        index = self.index()
        node = self._node(raw)
        if hops not in ("1", "2", "3"):
            raise HTTPError(400, f"k must be 1, 2 or 3 (links from the node), got {hops!r}.")
        nodes, left_out = neighbourhood(index.graph, node, int(hops))
        data = self._render.subgraph_data(index.graph, nodes, title=self.title)
        return {"center": node, "k": int(hops), "left_out": left_out, **data}


# ------------------------------------------------------------------ serving


class _Handler(WSGIRequestHandler):
    """wsgiref's handler, also passing the path as sent (PATH_INFO is decoded, so ``%2F`` would
    read as ``/``), and logging one line per request."""

    quiet = False

    def get_environ(self):
        environ = super().get_environ()
        environ["RAW_URI"] = self.path
        return environ

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        if not self.quiet:
            super().log_message(format, *args)


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a slow client does not keep the process alive at exit
    # Connections the kernel holds while every thread is taking one: socketserver's 5 made a
    # burst of 16 clients wait for TCP's retransmission, a second (bench/serve_latency.py --clients).
    request_queue_size = 128


class _Server6(_Server):
    address_family = socket.AF_INET6


@dataclass
class Running:
    """A server answering in a background thread (see :func:`start`)."""

    app: App
    server: WSGIServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
        self.app.close()


def make_app(graph, *, host: str = "127.0.0.1", **options) -> App:
    """The application for ``graph`` (``options`` as for :class:`App`), answering only loopback
    host names when ``host`` is loopback."""
    return App(graph, allowed_hosts=LOOPBACK if host in LOOPBACK else None, **options)


def start(app: App, *, host: str = "127.0.0.1", port: int = 0, quiet: bool = True) -> Running:
    """Serve ``app`` on ``host``:``port`` (0: a free port) in a background thread.

    The query workers start and the graph index is built in another thread
    meanwhile, so that neither the first query nor the explorer's first
    request waits for them.
    """
    handler = type("Handler", (_Handler,), {"quiet": quiet})
    try:
        server = make_server(host, port, app, server_class=_Server6 if ":" in host else _Server, handler_class=handler)
    except OSError as error:
        raise KGError(f"Cannot listen on {host}:{port} ({error.strerror}). Choose another --port, "
                      "or stop the program using it.") from None
    thread = threading.Thread(target=server.serve_forever, name="kg-serve", daemon=True)
    thread.start()
    threading.Thread(target=lambda: (app.pool, app.index()), name="kg-warm-up", daemon=True).start()
    return Running(app, server, thread)


def get(app: App, path: str, *, accept: str = "") -> tuple[int, dict, bytes]:
    """Answer one GET request for ``path`` in-process: ``(status, headers, body)``.

    This is ``kg serve GRAPH --get PATH``: the real application, no socket.

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     nt = Path(folder) / "g.nt"
    ...     _ = nt.write_text('<https://e.org/kg/task/qa> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> '
    ...                   '<https://w3id.org/kg/ontology#Task> .\\n', encoding="utf-8")
    ...     app = make_app(nt)
    ...     status, headers, body = get(app, "/index.json")
    ...     app.close()
    >>> status, headers["Content-Type"], json.loads(body)["triples"]
    (200, 'application/json', 1)
    """
    environ: dict = {}
    setup_testing_defaults(environ)
    raw_path, _, query = path.partition("?")
    environ.update({"REQUEST_METHOD": "GET", "RAW_URI": path, "PATH_INFO": unquote(raw_path, "latin-1"),
                    "QUERY_STRING": query, "HTTP_HOST": "localhost", "HTTP_ACCEPT": accept})
    result: dict = {}

    def start_response(status, headers):
        result["status"], result["headers"] = int(status.split()[0]), dict(headers)

    body = b"".join(app(environ, start_response))
    return result["status"], result["headers"], body
