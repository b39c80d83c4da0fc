"""The application: routes, responses and the SPARQL Protocol, over a WSGI server.

A plain WSGI application (:class:`App`) served by :mod:`wsgiref` with a thread
per request; ``kg serve --get PATH`` calls the same application in-process
(:func:`get`), so tests and scripts exercise the real thing. The pages' data
comes from :mod:`.views`, client SPARQL is answered by :mod:`.pool`'s
workers, and the explorer, search and neighbourhoods read :mod:`.index`.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import selectors
import socket
import socketserver
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.util import setup_testing_defaults

import pyoxigraph as ox

from ..endpoint import published_build
from ..errors import KGError
# kg.viz is the top-level viz/ folder (installed under that name, see pyproject.toml): the pages'
# templates, script and style live with the explorer's.
from ..similarity import graph_vectors
from ..viz import render
from ..store import (PREFIXES, STORE_SUFFIX, QueryRefused, fill_store, graph_file, graph_stem, refuse_federation,
                     store_dir)
from .index import GraphIndex, load_index, neighbourhood, search
from .pool import WORKER_MEMORY, HTTPError, QueryPool, endpoint_engine, oxigraph_engine
from .views import entity_view, example_queries, paper_view, segments

MAX_BODY = 1 << 20  # bytes of a POSTed query
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# An update starts, after its prologue, with one of these words; queries never do.
# A comment runs to the end of its line: a word inside one ("papers that address a task, with...") is no keyword.
_UPDATE = re.compile(r"^(?:\s|#[^\n]*(?:\n|$))*(?:(?:PREFIX\s*[\w.-]*:\s*<[^>]*>|BASE\s*<[^>]*>)(?:\s|#[^\n]*(?:\n|$))*)*"
                     r"(?:INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b", re.I)

#: ``?format=NAME`` stands for an Accept header: a download link cannot set headers.
FORMAT_NAMES = {"json": "application/sparql-results+json, application/ld+json",
                "xml": "application/sparql-results+xml, application/rdf+xml",
                "csv": "text/csv", "tsv": "text/tab-separated-values", "turtle": "text/turtle",
                "ttl": "text/turtle", "nt": "application/n-triples", "ntriples": "application/n-triples",
                "jsonld": "application/ld+json", "rdfxml": "application/rdf+xml"}


@dataclass
class Response:
    status: int
    body: bytes
    type: str
    headers: dict = field(default_factory=dict)


REASONS = {200: "OK", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 406: "Not Acceptable", 408: "Request Timeout", 413: "Payload Too Large",
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
    sparql : str, optional, keyword-only
        A SPARQL server's query endpoint that ``kg publish`` loaded the graph into:
        every page, view and query then reads the current build there, named by
        ``graph``'s file name, instead of the embedded store. The vectors beside
        ``graph``, when there, still serve search by meaning.

    Examples
    --------
    >>> app = App("tests/fixtures/no-such-graph")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    kg.errors.GraphNotFound: No graph at tests/fixtures/no-such-graph ...
    """

    def __init__(self, graph, *, timeout: float = 10.0, max_results: int = 10_000, pool: QueryPool | None = None,
                 overview_nodes: int = 400, allowed_hosts: set[str] | None = None,
                 worker_memory: int | None = WORKER_MEMORY, sparql: str | None = None):
        if timeout <= 0 or max_results < 1:
            raise KGError(f"--timeout must be positive and --max-results at least 1 (got {timeout}, {max_results}).")
        self.timeout, self.max_results, self.allowed_hosts = timeout, max_results, allowed_hosts
        self.worker_memory = worker_memory
        self.overview_nodes = overview_nodes
        self._scratch = None
        self.graph = graph
        if sparql is not None:
            self.title = graph_stem(graph).name
            self.store_path = None
            self.store = published_build(sparql, self.title)
            self._engine = endpoint_engine, json.dumps({"url": sparql, "default_graphs": self.store.default_graphs})
        else:
            folder = store_dir(graph)
            if folder is None:  # no store beside the files: load the RDF into a temporary one
                rdf = graph_file(graph)
                self._scratch = tempfile.TemporaryDirectory(prefix="kg-serve-")
                folder = fill_store(rdf, Path(self._scratch.name) / (rdf.stem + STORE_SUFFIX))
            self.title = Path(folder).name.removesuffix(STORE_SUFFIX)
            self.store_path = str(folder)
            self.store = ox.Store.read_only(self.store_path)
            self._engine = oxigraph_engine, self.store_path
        self._pool = pool
        # One lock each: building the index (seconds on a large graph) must not hold up queries.
        self._pool_lock, self._index_lock, self._page_lock = threading.Lock(), threading.Lock(), threading.Lock()
        self._related_lock = threading.Lock()
        self._index: GraphIndex | None = None
        self._explorer: bytes | None = None
        self._render = render
        self._templates = render._environment()
        self._templates.globals["highlight"] = lambda text, mentions: segments(
            text, [(m["start"], m["end"]) for m in mentions])
        self._related = None  # kg.related.RelatedIndex, read on the first request for related methods
        self._answers: dict[str, dict] = {}  # related methods by node: the graph never changes
        self._examples: list[dict] | None = None
        self._summary: dict | None = None
        self._neighbourhoods: dict[tuple[str, str], dict] = {}  # laid out, the oldest dropped first

    # ----------------------------------------------------------- lifecycle

    @property
    def pool(self) -> QueryPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = QueryPool(*self._engine, timeout=self.timeout,
                                       memory_limit=self.worker_memory)
            return self._pool

    def index(self) -> GraphIndex:
        with self._index_lock:
            if self._index is None:
                self._index = load_index(self.store, graph_vectors(self.graph))
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
            self._check_site(environ, path)
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

    def _check_site(self, environ, path: str) -> None:
        """Refuse what a page of another site makes a browser send, unless it only reads a page.

        A browser says who asks in ``Sec-Fetch-Site``, on every request (an ``<img src=/sparql?...>``
        too), and no page can set or change it: when sent, it decides. ``same-site`` is refused
        too: another port of this host (another local web app) is the same site. Older browsers send
        only ``Origin`` (on POSTs), which must then be this server's scheme and Host; ``null``, from
        a file:// page, is foreign. (Not when Sec-Fetch-Site is sent: this server's pages have
        ``Referrer-Policy: no-referrer``, so their own form posts carry ``Origin: null``.) Clients
        sending neither (curl, SPARQLWrapper) are no page's puppet. On a loopback server
        :meth:`_check_host` has already pinned Host to a loopback name, so a page on a DNS name
        rebound to 127.0.0.1 never gets here.
        """
        method = environ.get("REQUEST_METHOD", "GET")
        if method in ("GET", "HEAD") and path != "/sparql":
            return  # a page, its JSON twin or a static file: no client query runs, and without CORS the other site cannot read it
        site, origin = environ.get("HTTP_SEC_FETCH_SITE"), environ.get("HTTP_ORIGIN")
        own = f"{environ.get('wsgi.url_scheme', 'http')}://{environ.get('HTTP_HOST', '')}".lower()
        if site is not None:
            if site.lower() in ("same-origin", "none"):  # none: typed in, or a bookmark
                return
            sender = f"a page of another site (Sec-Fetch-Site: {site})"
        elif origin is None or origin.lower() == own:
            return
        else:
            sender = "a file or sandboxed page (Origin: null)" if origin == "null" else f"a page of {origin}"
        raise HTTPError(403, f"Cross-site request refused: {sender} asked for {method} {path}. Only this server's own "
                             "pages, and clients that send no Origin (curl, SPARQLWrapper), may run queries here.")

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
            if path.endswith(".json"):
                return self._json(view)
            # A query in the URL runs on load, unless another site sent the browser here: the page would
            # then post that site's query from this origin, past the cross-site check on /sparql.
            view["autorun"] = environ.get("HTTP_SEC_FETCH_SITE", "none") in ("same-origin", "none")
            return self._page("query.html", view)
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
        for name in ("default-graph-uri", "named-graph-uri"):  # the engine's refusal would come back as a 500
            for iri in params.get(name, []):
                try:
                    ox.NamedNode(iri)
                except ValueError as error:
                    raise HTTPError(400, f"Invalid {name} {iri!r}: {error}.") from None
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
        given = (environ.get("CONTENT_LENGTH") or "0").strip(" \t")  # spaces around are no part of a header's value
        # Digits only: int() takes "-1", and read(-1) reads until the client stops, past any cap;
        # it also takes "+12" and "1_2". Two Content-Length headers arrive joined by a comma.
        if not re.fullmatch(r"[0-9]{1,16}", given):
            raise HTTPError(400, f"Invalid Content-Length {given!r}: give the body's size in bytes.")
        length = int(given)
        if length > MAX_BODY:
            raise HTTPError(413, f"The request body is {length} bytes; at most {MAX_BODY} are read.")
        try:
            body = environ["wsgi.input"].read(length) if length else b""
        except TimeoutError:
            raise HTTPError(408, "The rest of the request body did not arrive in time.") from None
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
        if self._summary is None:  # counting reads every triple and node: once, the graph never changes
            G = self.index().graph
            kinds: dict[str, int] = {}
            for _, kind in G.nodes(data="kind"):
                kinds[kind] = kinds.get(kind, 0) + 1
            self._summary = {"title": self.title, "triples": len(self.store), "nodes": kinds,
                             "edges": G.number_of_edges(),
                             "urls": {"explorer": "/", "query": "/query", "sparql": "/sparql"}}
        return self._summary

    def query_view(self, query: str = "") -> dict:
        if self._examples is None:  # bound to the graph's entities: the same for every request
            self._examples = example_queries(self.index())
        return {"query": query, "endpoint": "/sparql", "examples": self._examples,
                "prefixes": PREFIXES, "timeout": self.timeout, "max_results": self.max_results}

    def _node(self, raw: str) -> str:
        node = self.index().find(raw)
        if node is None:
            raise HTTPError(404, f"No node {unquote(raw)!r} in this graph. Search for it at / or on /query.")
        return node

    def node_page(self, raw: str, *, with_related: bool = True) -> Response:
        index = self.index()
        # "ID.json" is the JSON twin, unless ID.json itself names a node.
        is_json = raw.endswith(".json") and (index.find(raw[:-5]) is not None or index.find(raw) is None)
        node = self._node(raw[:-5] if is_json else raw)
        if node.startswith("paper/"):
            view = paper_view(self.store, index, node)
        else:
            view = entity_view(self.store, index, node)
            if with_related:  # the explorer's panel loads them apart, as they may take seconds
                view.update(self.related_view(node))
        if is_json:
            return self._json(view)
        return self._page("paper.html" if view["type"] == "Paper" else "entity.html", view)

    def related_view(self, node: str) -> dict:
        """The methods :meth:`kg.related.RelatedIndex.related` ranks for this entity, each with its
        node id. The index is read from the store once, on the first request (seconds on a large
        graph); each answer then takes tens of milliseconds, and is kept."""
        if node not in self._answers:
            index = self.index()
            found = self.related_index().related(index.iri[node], k=5, vectors=index.vectors)[1]
            self._answers[node] = {"related": [{"id": index.by_label.get((r.type, r.label)), "label": r.label,
                                                "type": r.type, "score": r.score, "reason": r.reason()} for r in found],
                                   "related_note": ""}
        return self._answers[node]

    def related_index(self):
        from ..related import RelatedIndex

        with self._related_lock:
            if self._related is None:
                self._related = RelatedIndex(self.store)
            return self._related

    def neighbourhood_view(self, raw: str, hops: str) -> dict:
        index = self.index()
        node = self._node(raw)
        if hops not in ("1", "2", "3"):
            raise HTTPError(400, f"k must be 1, 2 or 3 (links from the node), got {hops!r}.")
        key = (node, hops)
        if key not in self._neighbourhoods:  # laying out up to 300 nodes takes a few hundred ms: kept
            nodes, left_out = neighbourhood(index.graph, node, int(hops))
            data = self._render.subgraph_data(index.graph, nodes, title=self.title)
            if len(self._neighbourhoods) >= NEIGHBOURHOODS_KEPT:
                self._neighbourhoods.pop(next(iter(self._neighbourhoods)))
            self._neighbourhoods[key] = {"center": node, "k": int(hops), "left_out": left_out, **data}
        return self._neighbourhoods[key]


#: How many laid-out neighbourhoods a server keeps.
NEIGHBOURHOODS_KEPT = 256


# ------------------------------------------------------------------ serving


#: Seconds a connection may stay silent, and may take to send its request line and headers.
READ_TIMEOUT = 20.0
#: Connections answered at once, each by a thread; one more is told 503 at once.
MAX_CONNECTIONS = 64
#: Connections that have sent nothing yet (one file descriptor each, no thread); past this, the
#: longest waiting is closed, well before the process runs out of file descriptors.
MAX_WAITING = 512


class _Deadline(io.RawIOBase):
    """A connection's input that gives up at ``deadline`` (a ``time.monotonic()``; None: never),
    not only after a silence: a client sending its headers a byte at a time (slowloris) cannot
    hold a thread longer than that."""

    def __init__(self, sock: socket.socket, timeout: float):
        self.sock, self.timeout, self.deadline = sock, timeout, None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        timeout = self.timeout
        if self.deadline is not None:
            timeout = self.deadline - time.monotonic()
            if timeout <= 0:
                raise TimeoutError("the request's head took too long")
        self.sock.settimeout(timeout)
        return self.sock.recv_into(buffer)


class _Handler(WSGIRequestHandler):
    """wsgiref's handler, also passing the path as sent (PATH_INFO is decoded, so ``%2F`` would
    read as ``/``), and logging one line per request. The request line and headers must arrive
    within ``timeout`` seconds, and the body may pause that long at most."""

    quiet = False
    timeout = READ_TIMEOUT

    def setup(self):
        super().setup()
        self.rfile.close()  # the buffered socket file made by setup: replaced by one with a deadline
        self.rfile = io.BufferedReader(_Deadline(self.connection, self.timeout))
        self.rfile.raw.deadline = time.monotonic() + self.timeout

    def parse_request(self):
        parsed = super().parse_request()  # the request line was read; this reads the headers
        self.rfile.raw.deadline = None  # the head has arrived; the body only has to keep coming
        self.connection.settimeout(self.timeout)  # not what was left of the head's time: answers are sent with it
        return parsed

    def handle(self):
        try:
            super().handle()
        except TimeoutError:  # socketserver would print a traceback for each
            self.close_connection = True
            self.log_message("closed a connection whose request did not arrive within %s s", self.timeout)

    def get_environ(self):
        environ = super().get_environ()
        environ["RAW_URI"] = self.path
        lengths = self.headers.get_all("Content-Length", [])
        if len(lengths) > 1:  # wsgiref keeps the first: which body is meant? Let the app refuse it
            environ["CONTENT_LENGTH"] = ",".join(lengths)
        return environ

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        if not self.quiet:
            super().log_message(format, *args)


class _Server(socketserver.ThreadingMixIn, WSGIServer):
    """A thread per connection once it has sent something (see :class:`_WaitingRoom`), at most
    ``max_connections`` threads; a connection finding them all taken is answered 503 at once."""

    daemon_threads = True  # a slow client does not keep the process alive at exit
    # Connections the kernel holds while every thread is taking one: socketserver's 5 made a
    # burst of 16 clients wait for TCP's retransmission, a second (bench/serve_latency.py --clients).
    request_queue_size = 128
    read_timeout = READ_TIMEOUT
    max_connections = MAX_CONNECTIONS
    max_waiting = MAX_WAITING

    def __init__(self, *args, **kwargs):
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self._waiting = _WaitingRoom(self)  # first: a failed bind calls server_close, which closes it
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address):
        self._waiting.add(request, client_address)

    def answer(self, request, client_address) -> None:
        """Called by the waiting room once the connection has something to read."""
        if self._slots.acquire(blocking=False):
            try:
                super().process_request(request, client_address)
            except BaseException:
                self._slots.release()
                raise
            return
        request.setblocking(False)  # the waiting room's thread must not wait on this client
        with contextlib.suppress(OSError):  # what came is drained, so that closing does not reset
            request.recv(1 << 16)           # the connection before the client reads the answer
        with contextlib.suppress(OSError):
            request.send(_BUSY)
        self.shutdown_request(request)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def server_close(self):
        self._waiting.close()
        super().server_close()


_BUSY_TEXT = b"Too many connections at once; try again in a moment.\n"
_BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"X-Content-Type-Options: nosniff\r\nRetry-After: 1\r\nConnection: close\r\n"
         b"Content-Length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT))


class _WaitingRoom:
    """Accepted connections that have sent nothing yet, watched by one thread: a silent connection
    costs a file descriptor here, not a thread (3,000 idle connections made 3,008 threads). One
    silent for the server's ``read_timeout`` is closed, and so is the longest waiting when more
    than ``max_waiting`` wait."""

    def __init__(self, server: _Server):
        self.server = server
        self.selector = selectors.DefaultSelector()
        self.waiting: dict[socket.socket, tuple] = {}  # -> (address, deadline), oldest first
        # The accepting thread hands connections over through a list and a wake-up byte, so that
        # only this thread touches the selector.
        self.arrived: list[tuple] = []
        self.lock = threading.Lock()
        self.wake, self.waker = socket.socketpair()
        self.waker.setblocking(False)
        self.selector.register(self.wake, selectors.EVENT_READ)
        self.closed = False
        self.thread = threading.Thread(target=self.run, name="kg-serve-waiting", daemon=True)
        self.thread.start()

    def add(self, sock: socket.socket, address) -> None:
        with self.lock:
            self.arrived.append((sock, address))
        self._wake_up()

    def _wake_up(self) -> None:
        try:
            self.waker.send(b"\0")
        except BlockingIOError:  # bytes already wait to be read: the thread will look anyway
            pass

    def run(self) -> None:
        while not self.closed:
            first = next(iter(self.waiting.values()), None)
            ready = self.selector.select(max(0.0, first[1] - time.monotonic()) if first else None)
            for key, _ in ready:
                if key.fileobj is self.wake:
                    self.wake.recv(1 << 16)
                    continue
                self.selector.unregister(key.fileobj)
                address, _ = self.waiting.pop(key.fileobj)
                try:
                    self.server.answer(key.fileobj, address)
                except Exception:  # noqa: BLE001 - e.g. no thread could start: this connection only
                    traceback.print_exc(file=sys.stderr)
                    self.server.shutdown_request(key.fileobj)
            with self.lock:
                arrived, self.arrived = self.arrived, []
            for sock, address in arrived:
                self.waiting[sock] = (address, time.monotonic() + self.server.read_timeout)
                self.selector.register(sock, selectors.EVENT_READ)
            # The same timeout for all: the oldest connection is the first to run out of time.
            while self.waiting and (len(self.waiting) > self.server.max_waiting
                                    or next(iter(self.waiting.values()))[1] <= time.monotonic()):
                self._drop(next(iter(self.waiting)))
        for sock in list(self.waiting):
            self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        self.selector.unregister(sock)
        del self.waiting[sock]
        self.server.shutdown_request(sock)

    def close(self) -> None:
        self.closed = True
        self._wake_up()
        self.thread.join(timeout=10)
        with self.lock:
            for sock, _ in self.arrived:
                self.server.shutdown_request(sock)
            self.arrived.clear()
        self.selector.close()
        self.wake.close()
        self.waker.close()


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


def start(app: App, *, host: str = "127.0.0.1", port: int = 0, quiet: bool = True,
          read_timeout: float = READ_TIMEOUT, max_connections: int = MAX_CONNECTIONS) -> Running:
    """Serve ``app`` on ``host``:``port`` (0: a free port) in a background thread.

    A connection is closed when it stays silent for ``read_timeout`` seconds, or takes longer
    to send its request line and headers; at most ``max_connections`` are answered at once.

    The query workers start and the graph index is built in another thread
    meanwhile, so that neither the first query nor the explorer's first
    request waits for them.
    """
    handler = type("Handler", (_Handler,), {"quiet": quiet, "timeout": read_timeout})
    server_class = type("Server", (_Server6 if ":" in host else _Server,),
                        {"read_timeout": read_timeout, "max_connections": max_connections})
    try:
        server = make_server(host, port, app, server_class=server_class, handler_class=handler)
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
