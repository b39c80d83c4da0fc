"""Export: a built graph for graph tools, as GraphML or GEXF (Gephi, Cytoscape, networkx).

Nodes are the graph's papers and entities, edges its paper -> entity roles, its entity ->
entity relations and its concept hierarchy (``broader``), read from the store as ``kg serve``
reads them (:func:`kg.serve.index.load_index`): a tool shows what the explorer shows. Every
attribute is a typed column: ``kind``, ``label``, ``aliases`` (joined by `` | ``), ``papers``,
``reach`` and ``salience`` for entities; ``kind``, ``label``, ``title``, ``venue`` and ``year``
for papers; ``role`` and ``support`` (papers stating it; 1 for a paper's own role) for edges.
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx

from .errors import KGError
from .store import open_graph

#: The formats ``kg export --to`` writes, by name: the file's extension and networkx's writer.
FORMATS = {"graphml": (".graphml", nx.write_graphml), "gexf": (".gexf", nx.write_gexf)}
_FIELDS = ("kind", "label", "aliases", "papers", "reach", "salience", "title", "venue", "year")


def tool_graph(graph: str | Path) -> nx.MultiDiGraph:
    """The graph at ``graph`` (``graphs/NAME``) with the attributes of the module's doc, each a
    str, int or float, so GraphML and GEXF can type its column."""
    from .serve.index import load_index

    source = load_index(open_graph(graph)).graph
    G = nx.MultiDiGraph()
    for node, data in source.nodes(data=True):
        attributes = {}
        for field in _FIELDS:
            value = data.get(field)
            if isinstance(value, list):
                value = " | ".join(value)
            if value not in (None, ""):
                attributes[field] = value
        G.add_node(node, **attributes)
    for subject, other, key, data in source.edges(keys=True, data=True):
        G.add_edge(subject, other, key=key, role=data.get("role", key), support=int(data.get("papers") or 1))
    return G


def export(graph: str | Path, target: str | Path, to: str) -> tuple[Path, int, int]:
    """Write the graph at ``graph`` to ``target`` as ``to`` (``graphml`` or ``gexf``); return the
    file, its number of nodes and its number of edges."""
    if to not in FORMATS:
        raise KGError(f"Cannot export to {to!r}; choose one of {', '.join(FORMATS)}.")
    G = tool_graph(graph)
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    FORMATS[to][1](G, target)
    return target, G.number_of_nodes(), G.number_of_edges()
