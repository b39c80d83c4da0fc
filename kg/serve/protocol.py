"""The SPARQL 1.1 Protocol's query operation, read from a WSGI request to ``/sparql``.

:func:`read_query` takes the request's WSGI ``environ`` and returns what it
asks (:class:`QueryRequest`), or raises :class:`~.pool.HTTPError` with the
status the Protocol gives: 400 for a malformed request, 403 for an update (the
endpoint is read-only), 405, 408, 413 and 415 for a request it cannot read. It
runs nothing, and reads the query no further than its first words: the
application hands it to its workers, which lex it for SERVICE
(:func:`kg.sparql.refuse_federation`, 403) in their own processes, so that even
a megabyte of hostile text holds up no other request.

References
----------
SPARQL 1.1 Protocol, W3C Recommendation, 21 March 2013, section 2.1 (query
operation): https://www.w3.org/TR/sparql11-protocol/#query-operation
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs

import pyoxigraph as ox

from .pool import HTTPError

#: Bytes of a POSTed body read at most; a longer one is answered 413.
MAX_BODY = 1 << 20
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
# The file extension of a download, where it is not the format's name.
_EXTENSIONS = {"turtle": "ttl", "ntriples": "nt"}


@dataclass(frozen=True)
class QueryRequest:
    """One SPARQL query operation: the query, the answer's media types, and its RDF dataset."""

    query: str
    #: The Accept header, or the media types ``?format=`` stands for.
    accept: str
    #: The ``?format=`` name (a key of :data:`FORMAT_NAMES`), "" when not given.
    format: str = ""
    #: ``default-graph-uri`` and ``named-graph-uri`` IRIs, in the order given.
    default_graphs: tuple[str, ...] = ()
    named_graphs: tuple[str, ...] = ()

    @property
    def download(self) -> str | None:
        """The file name a ``?format=`` answer is saved under (``results.ttl``); None without one."""
        return f"results.{_EXTENSIONS.get(self.format, self.format)}" if self.format else None


def read_query(environ: dict) -> QueryRequest:
    """The query operation a WSGI request to ``/sparql`` asks for.

    The query comes from ``?query=`` (GET or HEAD), a POSTed form, or a POSTed
    ``application/sparql-query`` body; exactly one must be given. ``format``,
    ``default-graph-uri`` and ``named-graph-uri`` come from the URL or the form.

    Raises
    ------
    HTTPError
        405 for another method; 403 for an update (a ``update`` parameter, an
        ``application/sparql-update`` body, or a query that starts as one);
        400 for no query, two, an unknown format or an
        invalid graph IRI; and as :func:`read_form` for the body.

    Examples
    --------
    >>> read_query({"REQUEST_METHOD": "GET", "QUERY_STRING": "query=ASK+%7B%7D&format=ttl"})
    QueryRequest(query='ASK {}', accept='text/turtle', format='ttl', default_graphs=(), named_graphs=())
    >>> read_query({"REQUEST_METHOD": "GET", "QUERY_STRING": "query=DROP+ALL"})
    Traceback (most recent call last):
    kg.serve.pool.HTTPError: This endpoint is read-only: SPARQL Update (INSERT, DELETE, LOAD, CLEAR, DROP...) is refused. To change the graph, rebuild it with 'kg build'.
    """
    method = environ.get("REQUEST_METHOD", "GET")
    params = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    if method == "POST":
        params = {**params, **read_form(environ)}
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
    fmt = params.get("format", [""])[0]
    if fmt and fmt not in FORMAT_NAMES:
        raise HTTPError(400, f"Unknown format {fmt!r}; choose one of {', '.join(FORMAT_NAMES)}.")
    for name in ("default-graph-uri", "named-graph-uri"):  # the engine's refusal would come back as a 500
        for iri in params.get(name, []):
            try:
                ox.NamedNode(iri)
            except ValueError as error:
                raise HTTPError(400, f"Invalid {name} {iri!r}: {error}.") from None
    return QueryRequest(query, FORMAT_NAMES[fmt] if fmt else environ.get("HTTP_ACCEPT", ""), fmt,
                        tuple(params.get("default-graph-uri", [])), tuple(params.get("named-graph-uri", [])))


def read_form(environ: dict) -> dict[str, list[str]]:
    """The parameters a POSTed body gives, by name, as :func:`urllib.parse.parse_qs` does.

    A form (``application/x-www-form-urlencoded``) gives its fields; an
    ``application/sparql-query`` body is the ``query``, an
    ``application/sparql-update`` one the ``update``.

    Raises
    ------
    HTTPError
        400 for a Content-Length that is not a number of bytes, or a body not
        UTF-8; 413 for a body over :data:`MAX_BODY`; 408 when the body stops
        arriving; 415 for another Content-Type.

    Examples
    --------
    >>> import io
    >>> read_form({"CONTENT_LENGTH": "6", "CONTENT_TYPE": "application/sparql-query",
    ...            "wsgi.input": io.BytesIO(b"ASK {}")})
    {'query': ['ASK {}']}
    >>> read_form({"CONTENT_LENGTH": "-1", "wsgi.input": io.BytesIO(b"")})
    Traceback (most recent call last):
    kg.serve.pool.HTTPError: Invalid Content-Length '-1': give the body's size in bytes.
    """
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
        return parse_qs(text, keep_blank_values=True)
    if kind == "application/sparql-query":
        return {"query": [text]}
    if kind == "application/sparql-update":
        return {"update": [text]}
    raise HTTPError(415, f"Cannot read a body of type {kind or 'unknown'!r}; send "
                         "application/x-www-form-urlencoded or application/sparql-query.")
