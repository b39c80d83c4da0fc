"""The index: the store as a light networkx graph, for the explorer, search and neighbourhoods.

Built once per server from the store (kinds, labels, aliases, papers, their
role edges and the relations between entities), so that search and
neighbourhoods never query the store.
Node ids are the ids :mod:`kg.vocab` mints (``method/group-relative-policy-optimization``,
``paper/abc``), the same as in a built graph and its offline page.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import pyoxigraph as ox

from .. import vocab
from ..queries import kg_terms, view, view_with
from ..similarity import Vectors
from ..store import PREFIXES
from ..viz.render import NEIGHBOURHOOD_LIMIT  # what a focused view draws, offline or served

SEARCH_LIMIT = 20
#: Below this cosine with the text, an entity is not suggested for its meaning ("phone app agents"
#: finds "Mobile GUI agents" at 0.72; "text summary" and "text-to-image generation" are at 0.59).
SEARCH_SIMILARITY = 0.6


@dataclass
class GraphIndex:
    """The nodes and role edges of a graph; nodes carry the attributes
    :func:`kg.viz.render.render_html` reads, except papers' abstracts, which
    pages fetch when they show one."""

    graph: nx.MultiDiGraph
    iri: dict[str, str]  # node id -> IRI
    names: list[tuple[str, str, str]] = field(default_factory=list)  # (casefolded name, name, node id)
    by_label: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, label) -> node id
    vectors: Vectors | None = None  # the entities' vectors (kg.similarity), for search by meaning

    def find(self, raw: str) -> str | None:
        """The node a URL path names: its id (as minted, or percent-decoded once), else, for
        people typing URLs, ``TYPE/NAME`` with a label or alias (case ignored; the entity most
        papers mention wins); None when nothing matches.

        >>> G = nx.MultiDiGraph()
        >>> G.add_node("method/group-relative-policy-optimization", kind="Method", papers=2)
        >>> index = GraphIndex(G, {}, names=[("grpo", "GRPO", "method/group-relative-policy-optimization")])
        >>> index.find("method/grpo"), index.find("task/grpo")
        ('method/group-relative-policy-optimization', None)
        """
        from urllib.parse import unquote

        for candidate in (raw, unquote(raw)):
            if candidate in self.graph:
                return candidate
        kind, _, name = unquote(raw).partition("/")
        wanted = " ".join(name.split()).casefold()
        matches = [node for folded, _, node in self.names
                   if folded == wanted and self.graph.nodes[node]["kind"].lower() == kind]
        return max(matches, key=lambda n: (self.graph.nodes[n].get("papers", 0), n), default=None)


def load_index(store: ox.Store, vectors: Vectors | None = None) -> GraphIndex:
    """Read the nodes, names, role edges and relations (with their support) of the graph in ``store``;
    ``vectors`` (:func:`kg.similarity.graph_vectors`) let search find entities by meaning.

    Rows are taken in the order of their values, not the engine's: the index, and every page
    laid out from it, are the same from the embedded store and from a SPARQL server."""
    G, iris = nx.MultiDiGraph(), {}
    index = GraphIndex(G, iris, vectors=vectors)

    def add(iri: str, **data) -> str:
        node = vocab.node_of_iri(iri)
        iris[node] = iri
        G.add_node(node, **data)
        return node

    entities = view_with("index-entities", **{"class": kg_terms(vocab.ENTITY_TYPES)})
    for row in ordered(store.query(entities, prefixes=PREFIXES), "e"):
        kind = row["class"].value.rsplit("#", 1)[-1]
        node = add(row["e"].value, kind=kind, label=row["label"].value, aliases=[],
                   papers=int(row["papers"].value) if row["papers"] else 0,
                   reach=int(row["reach"].value) if row["reach"] else 0,
                   salience=float(row["salience"].value) if row["salience"] else 0.0)
        index.by_label.setdefault((kind, row["label"].value), node)
    for row in ordered(store.query(view("index-aliases"), prefixes=PREFIXES), "e", "alias"):
        node = vocab.node_of_iri(row["e"].value)
        if node in G:
            G.nodes[node]["aliases"].append(row["alias"].value)
    for row in ordered(store.query(view("index-papers"), prefixes=PREFIXES), "p"):
        add(row["p"].value, kind="Paper", label=row["label"].value, title=value(row["title"]),
            venue=value(row["venue"]), year=value(row["date"]), abstract="", url="", authors=[])
    for row in ordered(store.query(view_with("index-roles", property=kg_terms(vocab.ROLES)), prefixes=PREFIXES),
                       "p", "e", "property"):
        paper, entity = vocab.node_of_iri(row["p"].value), vocab.node_of_iri(row["e"].value)
        if paper in G and entity in G:
            role = row["property"].value.rsplit("#", 1)[-1]
            G.add_edge(paper, entity, key=role, role=role)
    for row in ordered(store.query(view_with("index-relations", property=kg_terms(vocab.RELATIONS)),
                                   prefixes=PREFIXES), "s", "o", "property"):
        subject, other = vocab.node_of_iri(row["s"].value), vocab.node_of_iri(row["o"].value)
        if subject in G and other in G:
            relation = row["property"].value.rsplit("#", 1)[-1]
            G.add_edge(subject, other, key=relation, role=relation, papers=int(row["papers"].value))
    for row in ordered(store.query(view("broader-links"), prefixes=PREFIXES), "narrower", "broader"):
        narrower, broader = vocab.node_of_iri(row["narrower"].value), vocab.node_of_iri(row["broader"].value)
        if narrower in G and broader in G:
            G.add_edge(narrower, broader, key=vocab.BROADER, role=vocab.BROADER, papers=0)
    for node, data in G.nodes(data=True):
        names = [data.get("title") or data["label"]] + list(data.get("aliases", ()))
        index.names += [(" ".join(name.split()).casefold(), name, node) for name in dict.fromkeys(names) if name]
    return index


def ordered(rows, *variables: str) -> list:
    """Query solutions sorted by the values of ``variables``."""
    return sorted(rows, key=lambda row: tuple(value(row[name]) for name in variables))


def value(term) -> str:
    """A query solution's value as text, "" when unbound."""
    return term.value if term is not None else ""


def search(index: GraphIndex, text: str, *, limit: int = SEARCH_LIMIT) -> list[dict]:
    """Nodes whose label, title or alias contains ``text`` (case ignored): exact names first,
    then names starting with it, then the rest; entities mentioned by more papers first. With the
    graph's vectors, entities whose meaning is close to ``text`` follow (each with its ``similar``
    cosine), so that "phone app agents" finds "Mobile GUI agents"."""
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
    results = [{"id": node, "name": name, "label": index.graph.nodes[node]["label"],
                "kind": index.graph.nodes[node]["kind"], "papers": index.graph.nodes[node].get("papers", 0)}
               for node, (_, name) in found]
    if index.vectors is not None and len(results) < limit:
        results += _similar(index, wanted, {node for node, _ in found}, limit - len(results))
    return results


def _similar(index: GraphIndex, text: str, found: set[str], limit: int) -> list[dict]:
    """Up to ``limit`` entities not in ``found`` whose vectors are closest to ``text``'s, best first."""
    from ..similarity import load

    cosines = index.vectors.matrix @ load().encode([text])[0]
    results = []
    for row in cosines.argsort()[::-1]:
        node = index.vectors.nodes[row]
        if cosines[row] < SEARCH_SIMILARITY or len(results) == limit:
            break
        if node in index.graph and node not in found:
            data = index.graph.nodes[node]
            results.append({"id": node, "name": data["label"], "label": data["label"], "kind": data["kind"],
                            "papers": data.get("papers", 0), "similar": round(float(cosines[row]), 2)})
    return results


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


