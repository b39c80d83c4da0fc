"""Endpoint: a SPARQL server over HTTP, read as kg reads its embedded store.

:class:`SparqlEndpoint` answers ``query(text, prefixes=, substitutions=, default_graph=)``
with the result objects of pyoxigraph (``QuerySolutions``, ``QueryBoolean``, a list of
triples), parsed from the server's SPARQL 1.1 Protocol answers. So every reader of a
store (the explorer's index, the entity and paper views, related methods, ``kg query``)
runs unchanged against an Oxigraph server or Virtuoso that ``kg publish`` filled.
"""
from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable

import pyoxigraph as ox

from ..errors import KGError
from . import view, with_values
from ..sparql import query_form
from ..store import PREFIXES

#: What kg asks a server for, by the query's form: SPARQL XML results, which Virtuoso writes six times
#: as fast as JSON (0.33 s against 2.0 s for 20,000 rows; Oxigraph writes both alike), and N-Triples.
#: One header for both would do, but Virtuoso refuses a CONSTRUCT when results come first in it.
ACCEPT_RESULTS = "application/sparql-results+xml, application/sparql-results+json;q=0.9"
ACCEPT_GRAPH = "application/n-triples, text/turtle;q=0.9"
_RESULTS = {"application/sparql-results+json": ox.QueryResultsFormat.JSON,
            "application/json": ox.QueryResultsFormat.JSON,
            "application/sparql-results+xml": ox.QueryResultsFormat.XML}
_GRAPHS = {"application/n-triples": ox.RdfFormat.N_TRIPLES, "text/plain": ox.RdfFormat.N_TRIPLES,
           "text/turtle": ox.RdfFormat.TURTLE}


def with_prologue(query: str, prefixes: dict[str, str] | None = None, substitutions: dict | None = None) -> str:
    """``query`` with ``prefixes`` declared in front and each of ``substitutions`` (variable ->
    term) bound by a ``VALUES`` block opening its WHERE clause (:func:`kg.query.with_values`).

    >>> print(with_prologue("SELECT ?s WHERE { ?s kg:lookupKey ?key }", {"kg": "https://w3id.org/kg/ontology#"},
    ...                     {ox.Variable("key"): ox.Literal("gan")}))
    PREFIX kg: <https://w3id.org/kg/ontology#>
    SELECT ?s WHERE {
      VALUES ?key { "gan" }
     ?s kg:lookupKey ?key }
    """
    for variable, term in (substitutions or {}).items():
        query = with_values(query, variable.value, term)
    return "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in (prefixes or {}).items()) + query


class SparqlEndpoint:
    """The SPARQL 1.1 Protocol query endpoint at ``url``, read with pyoxigraph's result types.

    ``default_graphs`` are the named graphs whose merge is the default graph of every query
    (the protocol's ``default-graph-uri``): the current build of a published graph.
    """

    def __init__(self, url: str, *, default_graphs: Iterable[str] = (), timeout: float = 60.0):
        self.url, self.default_graphs, self.timeout = url, list(default_graphs), timeout

    def __repr__(self) -> str:
        return f"SparqlEndpoint({self.url!r}, default_graphs={self.default_graphs!r})"

    def query(self, query: str, *, prefixes: dict[str, str] | None = None, substitutions: dict | None = None,
              default_graph=None, named_graphs=None):
        """Run ``query`` as ``pyoxigraph.Store.query`` would, on the server. ``default_graph``
        (IRIs or ``NamedNode``s) replaces :attr:`default_graphs` for this query; ``[]`` leaves
        the dataset to the server."""
        fields = [("query", with_prologue(query, prefixes, substitutions))]
        graphs = [str(g.value if isinstance(g, ox.NamedNode) else g) for g in (self.default_graphs if default_graph is None else default_graph)]
        fields += [("default-graph-uri", iri) for iri in graphs]
        fields += [("named-graph-uri", str(g.value if isinstance(g, ox.NamedNode) else g)) for g in named_graphs or ()]
        graph = query_form(query) in ("CONSTRUCT", "DESCRIBE")
        kind, body = self._post(fields, ACCEPT_GRAPH if graph else ACCEPT_RESULTS)
        if kind in _RESULTS:
            return ox.parse_query_results(body, format=_RESULTS[kind])
        if kind in _GRAPHS:
            return list(ox.parse(body, format=_GRAPHS[kind]))
        raise KGError(f"{self.url} answered with {kind or 'no Content-Type'}, not SPARQL results.")

    def __len__(self) -> int:
        """The number of triples in the default graph."""
        [row] = self.query(view("size"))
        return int(row["triples"].value)

    def graph_size(self, graph: str) -> int:
        """The number of triples in the named graph ``graph``."""
        [row] = self.query(with_values(view("graph-size"), "graph", ox.NamedNode(graph)), default_graph=[])
        return int(row["triples"].value)

    def _post(self, fields: list[tuple[str, str]], accept: str) -> tuple[str, bytes]:
        request = urllib.request.Request(self.url, data=urllib.parse.urlencode(fields).encode("utf-8"),
                                         headers={"Accept": accept,
                                                  "Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                kind = response.headers.get_content_type()
                return kind, response.read()
        except urllib.error.HTTPError as error:
            detail = " ".join(error.read().decode("utf-8", "replace").split())[:500]
            raise KGError(f"{self.url} refused the query ({error.code}): {detail}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise KGError(f"Cannot reach the SPARQL endpoint {self.url}: {reason}") from None


def current_builds(endpoint: SparqlEndpoint, name: str) -> list[str]:
    """The named graphs that the catalog on ``endpoint``'s server names as the current build of the
    published graph ``name`` (one, once ``kg publish`` has run; none before)."""
    rows = endpoint.query(with_values(view("current-build"), "name", ox.Literal(name)), prefixes=PREFIXES,
                          default_graph=[])
    return [row["build"].value for row in rows]


def published_build(url: str, name: str) -> SparqlEndpoint:
    """The endpoint at ``url`` reading the current build of the published graph ``name``.
    Raises ``KGError`` when the server has none."""
    builds = current_builds(SparqlEndpoint(url), name)
    if not builds:
        raise KGError(f"{url} has no published graph named {name!r}: load it with "
                      f"'kg publish -g graphs/{name} --to oxigraph|virtuoso --url …' first.")
    return SparqlEndpoint(url, default_graphs=builds[:1])
