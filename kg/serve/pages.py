"""Views: the data behind each page of the server, as plain dicts.

Each HTML page renders one of these and its JSON twin is the same dict, so the two cannot
disagree. An entity's and a paper's view is read by :class:`kg.query.views.Tables` from the tables
(:func:`kg.query.tables.graph_tables`) of the whole graph (:func:`kg.query.graph_index.read_tables`),
as the offline page reads those it embeds (``viz/explorer/tables.js`` and ``views.js``), so that a panel is the same served and offline; the server adds only what needs it: the node's IRI, the SPARQL query behind the panel and
the pages' URLs. Lists come from the index.
"""
from __future__ import annotations

import threading
from urllib.parse import urlencode

import pyoxigraph as ox

from .. import vocab
from ..query.graph_index import GraphIndex
from ..query import examples, kept_values, kg_terms, view, view_with, with_values

_reading = threading.Lock()  # guards the panels kept with the index
#: How many panels the server keeps read: a page opened again answers from memory.
KEPT_PANELS = 512


def example_queries(store: ox.Store | None = None, kept: dict | None = None) -> list[dict]:
    """The shipped example queries, ready to run: each parameter bound to a name of the graph in
    ``store`` for which the example answers (:meth:`kg.query.Example.values_in`, as ``kg query
    --list`` cites them), else to the most mentioned entity of its type, else (without a ``store``,
    or a graph with no entity of that type) to the example's own value. ``kept``: the choices the
    build made of the same store and kept in the graph's tables (:func:`kg.query.tables.store_answers`),
    read instead of asking the store again."""
    shipped = []
    for example in examples().values():
        found = kept_values(kept, example, or_most_mentioned=True)
        if found is None:
            found = example.values_in(store, or_most_mentioned=True) if store is not None else {}
        chosen = {name: found.get(name) or value for name, value in example.params.items()}
        shipped.append({"name": example.name, "description": example.description, "query": example.bind(chosen)})
    return shipped


def panel(index: GraphIndex, node: str) -> dict:
    """The panel of ``node`` (:meth:`kg.query.views.Tables.view` of the graph's tables), the last
    :data:`KEPT_PANELS` kept with ``index``."""
    with _reading:
        found = index.panels.pop(node, None)
        if found is not None:
            index.panels[node] = found  # the most recent last
            return found
    found = index.tables.view(node)
    with _reading:
        index.panels[node] = found
        while len(index.panels) > KEPT_PANELS:
            index.panels.pop(next(iter(index.panels)))
    return found


def entity_view(index: GraphIndex, node: str) -> dict:
    """An entity's panel (:meth:`kg.query.views.Tables.entity_view`) with its IRI, its page's URLs and
    the SPARQL query listing its evidence."""
    iri = ox.NamedNode(index.iri[node])
    query = with_values(view("panel-evidence"), "entity", iri)
    return {**panel(index, node), "iri": iri.value, "sparql": query, "urls": urls(node, query)}


def paper_view(index: GraphIndex, node: str) -> dict:
    """A paper's panel (:meth:`kg.query.views.Tables.paper_view`) with its IRI, its page's URLs and the
    SPARQL query listing its mentions."""
    iri = ox.NamedNode(index.iri[node])
    query = with_values(view_with("paper-mentions", **{"class": kg_terms(vocab.ENTITY_TYPES)}), "paper", iri)
    return {**panel(index, node), "iri": iri.value, "sparql": query, "urls": urls(node, query)}


def urls(node: str, query: str | None = None) -> dict:
    """A node's page, its JSON twin, its place in the explorer and (given) its query on /query."""
    page = f"/{node}" if node.startswith("paper/") else f"/entity/{node}"
    found = {"html": page, "json": page + ".json", "explorer": "/?" + urlencode({"node": node})}
    if query is not None:
        found["query"] = "/query?" + urlencode({"query": query})
    return found


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


