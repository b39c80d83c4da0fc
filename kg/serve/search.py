"""Search and neighbourhoods over the index (:mod:`kg.query.graph_index`, made of the graph's tables), for the
explorer, ``/search.json`` and ``/neighbourhood.json``.

Node ids are the ids :mod:`kg.vocab` mints, the same as in a built graph and its offline page.
"""
from __future__ import annotations

import functools

from ..query.graph_index import GraphIndex
from ..query.views import NEIGHBOURHOOD_LIMIT, SEARCH_LIMIT
from ..strings import fold, js_order

#: Below this cosine with the text, an entity is not suggested for its meaning ("phone app agents"
#: finds "Mobile GUI agents" at 0.72; "text summary" and "text-to-image generation" are at 0.59).
SEARCH_SIMILARITY = 0.6


def search(index: GraphIndex, text: str, *, limit: int = SEARCH_LIMIT) -> list[dict]:
    """Nodes whose label, title or alias contains ``text`` (case ignored): exact names first,
    then names starting with it, then the rest; entities mentioned by more papers first. With the
    graph's vectors, entities whose meaning is close to ``text`` follow (each with its ``similar``
    cosine), so that "phone app agents" finds "Mobile GUI agents"."""
    wanted = fold(text)
    if not wanted:
        return []
    best: dict[str, tuple] = {}
    for (folded, name, node), then in zip(index.names, ranks(index)):
        at = folded.find(wanted)
        if at < 0:
            continue
        rank = (0 if folded == wanted else 1 if at == 0 else 2, *then)
        if node not in best or rank < best[node][0]:
            best[node] = (rank, name)
    found = sorted(best.items(), key=lambda item: item[1][0])[:limit]
    results = [{"id": node, "name": name, **dict(zip(("label", "kind", "papers"), index.node(node)))}
               for node, (_, name) in found]
    if index.vectors is not None and len(results) < limit:
        results += _similar(index, wanted, {node for node, _ in found}, limit - len(results))
    return results


def ranks(index: GraphIndex) -> list[tuple]:
    """What :func:`search` ranks each of the index's names by after how it matches: the papers of
    its node (most first), then its length and text as JavaScript compares them (the page's
    searchTables ranks alike). Made once per index: a short word matches most names."""
    if len(index.ranks) != len(index.names):
        index.ranks = [(-index.node(node)[2], len(js_order(name)), js_order(name)) for _, name, node in index.names]
    return index.ranks


def _similar(index: GraphIndex, text: str, found: set[str], limit: int) -> list[dict]:
    """Up to ``limit`` entities not in ``found`` whose vectors are closest to ``text``'s, best first."""
    from ..similarity import load

    cosines = index.vectors.matrix @ load().encode([text])[0]
    results = []
    for row in cosines.argsort()[::-1]:
        node = index.vectors.nodes[row]
        if cosines[row] < SEARCH_SIMILARITY or len(results) == limit:
            break
        if node in index.iri and node not in found:
            label, kind, papers = index.node(node)
            results.append({"id": node, "name": label, "label": label, "kind": kind, "papers": papers,
                            "similar": round(float(cosines[row]), 2)})
    return results


def neighbourhood(index: GraphIndex, node: str, hops: int, *, limit: int = NEIGHBOURHOOD_LIMIT) -> tuple[list, int]:
    """The nodes at most ``hops`` links from ``node`` (either direction), nearest first and, at
    each distance, the most mentioned first; at most ``limit`` of them. Also returns how many
    were left out. Read from the graph's tables (:meth:`kg.query.views.Tables.neighbours`).

    >>> import networkx as nx
    >>> from kg.query.tables import whole_tables
    >>> from kg.query.views import Tables
    >>> G = nx.MultiDiGraph([("paper/1", "task/a", "addresses"), ("paper/2", "task/a", "addresses"),
    ...                      ("paper/2", "task/b", "addresses")])
    >>> for n in G:
    ...     G.nodes[n].update(kind="Paper" if n.startswith("paper/") else "Task", label=n[-1], papers=0)
    >>> index = GraphIndex(Tables(whole_tables(G, base="https://example.org/")))
    >>> neighbourhood(index, "task/b", 2), neighbourhood(index, "task/b", 2, limit=2)
    ((['task/b', 'paper/2', 'task/a'], 0), (['task/b', 'paper/2'], 1))
    """
    tables = index.tables
    order, seen, frontier, left_out = [node], {node}, [node], 0

    @functools.cache  # a node's neighbours and weight are read once however many frontier nodes it neighbours
    def neighbours(n):
        return [tables.ids[i] for i in tables.neighbours(tables.index_of[n])]

    @functools.cache
    def weight(n):  # the most mentioned first, then the most linked (distinct neighbours), then by id
        return -index.node(n)[2], -len(neighbours(n)), js_order(n)

    for _ in range(hops):
        following = []
        for current in frontier:
            for other in sorted(neighbours(current), key=weight):
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
