"""The application: routes and responses, a plain WSGI application (:class:`App`).

:mod:`.server` serves it over sockets; ``kg serve --get PATH`` calls the same
application in-process (:func:`get`), so tests and scripts exercise the real
thing. The pages' data comes from :mod:`.views`, ``/sparql`` requests are read
by :mod:`.protocol` and answered by :mod:`.pool`'s workers, and the explorer,
search and neighbourhoods read :mod:`.index`.
"""
from __future__ import annotations

import json
import re
import sys
import tempfile
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit
from wsgiref.util import setup_testing_defaults

import pyoxigraph as ox

from ..query.endpoint import published_build
from ..errors import KGError
from ..similarity import graph_vectors
# kg.viz is the top-level viz/ folder (installed under that name, see pyproject.toml): the pages'
# templates, script and style live with the explorer's.
from ..viz import render
from ..viz.overview import Topic
from ..store import PREFIXES, STORE_SUFFIX, fill_store, graph_file, graph_stem, store_dir
from ..vocab import NODE_KINDS
from ..query.graph_index import GraphIndex, read_tables
from .search import neighbourhood, ranks, search
from .pool import WORKER_MEMORY, HTTPError, QueryPool, endpoint_engine, oxigraph_engine
from .protocol import read_query
from .pages import entity_view, example_queries, paper_view, segments

#: Addresses that reach this computer only, as ``--host`` gives them.
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
#: The names a server answers by default, as they are written in a Host header.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# A Host header's value (RFC 9110, section 7.2): a name, an IPv4 address or a bracketed IPv6 one, and
# an optional port; nothing else, so that "127.0.0.1:8000.evil.example" or "127.0.0.1:8000@evil.example"
# cannot pass for a loopback name.
_AUTHORITY = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?)(?::(?P<port>[0-9]{1,5}))?")


def parse_authority(value: str) -> tuple[str, int | None] | None:
    """A Host header's ``(name, port)``, the name in lower case, the port None where not given;
    None for anything else.

    >>> parse_authority("LocalHost:8000"), parse_authority("[::1]:80"), parse_authority("example.org")
    (('localhost', 8000), ('[::1]', 80), ('example.org', None))
    >>> parse_authority("127.0.0.1:8000.evil.example"), parse_authority("127.0.0.1:8000@evil.example")
    (None, None)
    """
    match = _AUTHORITY.fullmatch(value.strip(" \t").lower())
    if match is None:
        return None
    return match["name"], int(match["port"]) if match["port"] else None


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
    allowed_hosts : iterable of str, optional, keyword-only
        The Host names requests may be addressed to, each ``NAME`` (with the
        server's own port) or ``NAME:PORT``; default: 127.0.0.1, localhost and
        [::1]. Any other Host is refused, so that a web page cannot reach the
        server through a DNS name of its own rebound to this computer's address.
    sparql : str, optional, keyword-only
        A SPARQL server's query endpoint that ``kg publish`` loaded the graph into:
        every query then reads the current build there, named by ``graph``'s file
        name, instead of the embedded store; the pages read the tables kept beside
        ``graph`` where they are, else tables made once of the server's store
        (:func:`kg.query.graph_index.read_tables`). The vectors beside ``graph``,
        when there, still serve search by meaning.

    Examples
    --------
    >>> app = App("tests/fixtures/no-such-graph")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    kg.errors.GraphNotFound: No graph at tests/fixtures/no-such-graph ...
    """

    def __init__(self, graph, *, timeout: float = 10.0, max_results: int = 10_000, pool: QueryPool | None = None,
                 overview_nodes: int = 400, allowed_hosts=LOOPBACK_NAMES,
                 worker_memory: int | None = WORKER_MEMORY, sparql: str | None = None):
        if timeout <= 0 or max_results < 1:
            raise KGError(f"--timeout must be positive and --max-results at least 1 (got {timeout}, {max_results}).")
        self.timeout, self.max_results = timeout, max_results
        self.allowed_hosts = set()  # (name, port), port None: the server's own
        for name in allowed_hosts:
            authority = parse_authority(name)
            if authority is None:
                raise KGError(f"Invalid host name {name!r} (--allow-host): give NAME or NAME:PORT.")
            self.allowed_hosts.add(authority)
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
        self._related = None  # kg.query.related.RelatedIndex, read while warming up or on the first request
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
                self._index = GraphIndex(read_tables(self.graph, self.store), lambda: graph_vectors(self.graph))
            return self._index

    def warm_up(self) -> None:
        """Start the query workers and read what first requests need: the index the pages look nodes
        up in and search, the explorer's page, the query page's examples and the summary, then the
        related-methods index (a second at 20,000 papers), so that no first visitor waits for them (a
        panel and a neighbourhood are read from the tables: milliseconds)."""
        self.pool  # noqa: B018 - a property that starts the workers
        ranks(self.index())  # what search ranks names by: read once, not on the first search
        self.explorer_page()
        self.query_view()
        self.index_view()
        self.related_index()

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
        except HTTPError as error:
            return self._refusal(error.status, str(error), wants_json)
        try:
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
        """Refuse a request addressed to a name this server does not answer by (400).

        A page on attacker.example whose DNS name is rebound to 127.0.0.1 is, to the browser, on
        the same origin as this server, and may read its answers; its requests still say
        ``Host: attacker.example``. So the Host header is read strictly (:func:`parse_authority`)
        and must be one of :attr:`allowed_hosts`, port included: a port not given is HTTP's 80.
        HTTP/1.1 requires a Host; an HTTP/1.0 request without one comes from no browser.
        """
        host = environ.get("HTTP_HOST")
        if host is None:
            if environ.get("SERVER_PROTOCOL", "HTTP/1.0") != "HTTP/1.0":
                raise HTTPError(400, "No Host header: an HTTP/1.1 request must name the host it is for.")
            return
        names = [host]
        raw = environ.get("RAW_URI", "")
        if not raw.startswith("/") and urlsplit(raw).netloc:  # absolute-form: the name in it is what is asked
            names.append(urlsplit(raw).netloc)
        for name in names:
            authority = parse_authority(name)
            if authority is None:
                raise HTTPError(400, f"Invalid Host {name[:200]!r}: give a host name and, if not 80, its port.")
            port = int(environ.get("SERVER_PORT") or 80)
            if not self.serves(authority, port):
                allowed = ", ".join(sorted(f"{known}:{known_port or port}" for known, known_port in self.allowed_hosts))
                raise HTTPError(400, f"Unexpected Host {name[:200]!r}: this server answers requests for {allowed} "
                                     "only. To answer another name, start it with --allow-host NAME.")

    def serves(self, authority: tuple[str, int | None], port: int) -> bool:
        """Whether a request for ``authority`` (:func:`parse_authority`'s) is answered by this
        server, listening on ``port``."""
        name, asked = authority
        return any(name == allowed and (asked or 80) == (allowed_port or port)
                   for allowed, allowed_port in self.allowed_hosts)

    def _refusal(self, status: int, message: str, wants_json: bool) -> Response:
        """A one-line answer that says nothing of the graph, for a request this server will not read:
        a page that got here through a rebound DNS name reads it."""
        if wants_json:
            return self._json({"status": status, "error": message}, status)
        return Response(status, (message + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    def _check_site(self, environ, path: str) -> None:
        """Refuse what a page of another site makes a browser send, unless it only reads a page.

        A browser says who asks in ``Sec-Fetch-Site``, on every request (an ``<img src=/sparql?...>``
        too), and no page can set or change it: when sent, it decides. ``same-site`` is refused
        too: another port of this host (another local web app) is the same site. Older browsers send
        only ``Origin`` (on POSTs), which must then be this server's scheme and Host; ``null``, from
        a file:// page, is foreign. (Not when Sec-Fetch-Site is sent: this server's pages have
        ``Referrer-Policy: no-referrer``, so their own form posts carry ``Origin: null``.) An Origin
        other than ``null`` must be this server's, whatever Sec-Fetch-Site says. Clients sending
        neither (curl, SPARQLWrapper) are no page's puppet. :meth:`_check_host` has already pinned
        Host to a name this server answers by, so a page on a DNS name rebound to its address never
        gets here.
        """
        method = environ.get("REQUEST_METHOD", "GET")
        if method in ("GET", "HEAD") and path != "/sparql":
            return  # a page, its JSON twin or a static file: no client query runs, and without CORS the other site cannot read it
        site, origin = environ.get("HTTP_SEC_FETCH_SITE"), environ.get("HTTP_ORIGIN")
        own = f"{environ.get('wsgi.url_scheme', 'http')}://{environ.get('HTTP_HOST', '')}".lower()
        if origin not in (None, "null") and origin.lower() != own:
            # Whatever Sec-Fetch-Site says: an Origin names the page that asks, and only this one's may.
            raise HTTPError(403, f"Cross-site request refused: a page of {origin[:200]} asked for {method} {path}. "
                                 "Only this server's own pages, and clients that send no Origin (curl, "
                                 "SPARQLWrapper), may run queries here.")
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
        if path == "/sparql":
            return self.sparql(environ)
        method = environ.get("REQUEST_METHOD", "GET")
        if method not in ("GET", "HEAD"):
            raise HTTPError(405, f"{method} is not allowed here; only /sparql takes POST.")
        params = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
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
        if path == "/trends.json":  # kg trends --format json
            return self._json(self.trends_view(get("by", "year"), params.get("type", []), get("from"), get("to"),
                                               get("k", "15")))
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

    def sparql(self, environ) -> Response:
        """The SPARQL 1.1 Protocol's query operation, answered by the workers; updates are refused."""
        request = read_query(environ)
        reply = self.pool.run({"query": request.query, "accept": request.accept, "max_results": self.max_results,
                               "default_graph": list(request.default_graphs),
                               "named_graphs": list(request.named_graphs)})
        headers = {"Vary": "Accept"}
        if reply["truncated"]:
            headers["KG-Results-Truncated"] = f"first {self.max_results} results (kg serve --max-results)"
        if request.download and reply["status"] == 200:
            headers["Content-Disposition"] = f'attachment; filename="{request.download}"'
        return Response(reply["status"], reply["body"], reply["type"], headers)

    # ------------------------------------------------------------------ views

    def _kept(self, key: str):
        """What the build kept under ``key`` in the graph's tables (:func:`kg.query.tables.whole_tables`), None
        where it kept nothing under ``key`` (tables made from a store): it is then worked out anew."""
        return self.index().tables.t.get(key)

    def explorer_page(self) -> bytes:
        index = self.index()
        with self._page_lock:
            if self._explorer is None:
                kept = self._kept("map")  # the map the build made
                try:
                    topics = [Topic.from_json(topic) for topic in kept] if isinstance(kept, list) else None
                except (KeyError, TypeError, ValueError):  # not as a build writes it: the map is made anew
                    topics = None
                if topics is not None and len(topics) >= 2 and len(index.iri) > self.overview_nodes:
                    # The page opens on the map: made of the tables, without the graph (seconds at 20,000 papers)
                    page = self._render.served_map_page(index.tables, topics, title=self.title)
                else:
                    page = self._render.render_page(index.graph, title=self.title, max_nodes=self.overview_nodes,
                                                    served=True, topics=topics)
                self._explorer = page.encode("utf-8")
            return self._explorer

    def index_view(self) -> dict:
        index = self.index()
        with self._page_lock:
            if self._summary is None:  # counting reads every triple and node: once, the graph never changes
                kinds: dict[str, int] = {}
                for node in index.iri:
                    kind = index.node(node)[1]
                    kinds[kind] = kinds.get(kind, 0) + 1
                kept = self._kept("triples")
                triples = kept if type(kept) is int else len(self.store)  # noqa: E721 - not a bool
                self._summary = {"title": self.title, "triples": triples, "nodes": kinds,
                                 "edges": index.tables.edges(),
                                 "urls": {"explorer": "/", "query": "/query", "sparql": "/sparql"}}
            return self._summary

    def trends_view(self, by: str, types: list[str], earlier: str, later: str, top: str) -> dict:
        """What ``kg trends`` answers, for ``/trends.json?by=year&type=Method&from=2017&to=2018&k=15``."""
        from ..query.trends import trends

        if not top.isdigit() or not 1 <= int(top) <= 100:
            raise HTTPError(400, f"k must be a number from 1 to 100, got {top!r}.")
        try:
            return trends(self.index(), by=by, types=types or None, earlier=earlier or None, later=later or None,
                          top=int(top)).as_json()
        except KGError as error:
            raise HTTPError(400, str(error)) from None

    def query_view(self, query: str = "") -> dict:
        with self._page_lock:
            if self._examples is None:  # bound to the graph's entities: the same for every request
                self._examples = example_queries(self.store, self._kept("examples"))
        # Opened bare, the editor holds the first example (not run): a start, not an empty box.
        query = query or (self._examples[0]["query"] if self._examples else "")
        return {"query": query, "endpoint": "/sparql", "examples": self._examples, "node_kinds": list(NODE_KINDS),
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
            view = paper_view(index, node)
        else:
            view = entity_view(index, node)
            if with_related:  # the explorer's panel loads them apart, as they may take seconds
                view.update(self.related_view(node))
        if is_json:
            return self._json(view)
        return self._page("paper.html" if view["type"] == "Paper" else "entity.html", view)

    def related_view(self, node: str) -> dict:
        """The methods :meth:`kg.query.related.RelatedIndex.related` ranks for this entity, each with its
        node id. The index is made of the graph's tables once, as the server warms up; each answer then
        takes tens of milliseconds, and is kept."""
        if node not in self._answers:
            index = self.index()
            related = self.related_index()
            answer = related.answer(index.iri[node], k=5, vectors=index.vectors)
            self._answers[node] = {"related": [{"id": index.by_label.get((r.type, r.label)), "label": r.label,
                                                "type": r.type, "score": r.score, "reason": r.reason()}
                                               for r in answer.results],
                                   "variants": [{"id": index.by_label.get(("Method", label)), "label": label,
                                                 "papers": papers} for label, papers in answer.variants],
                                   "related_note": ""}
        return self._answers[node]

    def related_index(self):
        from ..query.related import RelatedIndex

        with self._related_lock:
            if self._related is None:
                self._related = RelatedIndex(self.index().tables)
            return self._related

    def neighbourhood_view(self, raw: str, hops: str) -> dict:
        index = self.index()
        node = self._node(raw)
        if hops not in ("1", "2", "3"):
            raise HTTPError(400, f"k must be 1, 2 or 3 (links from the node), got {hops!r}.")
        key = (node, hops)
        if key not in self._neighbourhoods:  # laying out up to 300 nodes takes a few hundred ms: kept
            nodes, left_out = neighbourhood(index, node, int(hops))
            data = self._render.served_subgraph_data(index.tables, nodes, title=self.title)
            if len(self._neighbourhoods) >= NEIGHBOURHOODS_KEPT:
                self._neighbourhoods.pop(next(iter(self._neighbourhoods)))
            self._neighbourhoods[key] = {"center": node, "k": int(hops), "left_out": left_out, **data}
        return self._neighbourhoods[key]


#: How many laid-out neighbourhoods a server keeps.
NEIGHBOURHOODS_KEPT = 256


def make_app(graph, *, host: str = "127.0.0.1", allow_hosts=(), **options) -> App:
    """The application for ``graph`` (``options`` as for :class:`App`) served on ``host``: it
    answers requests for 127.0.0.1, localhost and [::1], for ``host`` itself when that is one
    address (not 0.0.0.0 or ::), and for the names of ``allow_hosts`` (``kg serve --allow-host``)."""
    names = list(LOOPBACK_NAMES)
    if host not in LOOPBACK and host not in ("0.0.0.0", "::", ""):
        names.append(f"[{host}]" if ":" in host else host)
    return App(graph, allowed_hosts=[*names, *allow_hosts], **options)


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
