"""What the explorer opens on when a graph has more nodes than it draws: its top concepts
(:func:`select_concepts`) or, without a concept hierarchy, its most mentioned entities and their
papers (:func:`select_overview`)."""
from __future__ import annotations

from collections import Counter, defaultdict

import networkx as nx

from kg.query.tables import PAPER, papers_reached
from kg.vocab import BROADER

#: A large graph with a concept hierarchy opens on its top concepts (the roots that reach the most
#: papers), each with its largest narrower ones: labelled nodes a person can read, not a hairball.
OVERVIEW_CONCEPTS = 30
OVERVIEW_NARROWER = 1  # narrower concepts shown beside each top concept
OVERVIEW_NODES = 50  # at most: each label legible at the fitted zoom of a laptop's screen
#: Papers a top concept needs of its own: "NARX", named by one paper, comes after every root three
#: papers name, however many papers its narrower names reach. A concept no paper names alone counts
#: the papers reaching it.
MIN_ROOT_PAPERS = 3


def _support(node: dict) -> int:
    return node.get("papers") or papers_reached(node)


def select_concepts(G: nx.MultiDiGraph, max_nodes: int) -> list | None:
    """The top concepts of ``G`` and their largest narrower ones, at most ``max_nodes`` (and
    :data:`OVERVIEW_NODES`) nodes, the largest first, each followed by its narrower ones; None
    when ``G`` has no concept hierarchy (no ``broader`` link).

    Top concepts are the entities nothing is broader than, those :data:`MIN_ROOT_PAPERS` papers
    name first, by the papers they reach (``reach``, their own and their narrower entities'),
    :data:`OVERVIEW_CONCEPTS` of them, each with its :data:`OVERVIEW_NARROWER` largest narrower
    entities that reach two papers or more.

    >>> G = nx.MultiDiGraph()
    >>> G.add_nodes_from([("task/summarization", {"kind": "Task", "papers": 0, "reach": 3}),
    ...                   ("task/document-summarization", {"kind": "Task", "papers": 2, "reach": 2}),
    ...                   ("task/news-summarization", {"kind": "Task", "papers": 1, "reach": 1}),
    ...                   ("task/narx", {"kind": "Method", "papers": 1, "reach": 195}),
    ...                   ("task/parsing", {"kind": "Task", "papers": 3, "reach": 3}), ("paper/1", {"kind": "Paper"})])
    >>> _ = G.add_edge("task/document-summarization", "task/summarization", key="broader")
    >>> _ = G.add_edge("task/news-summarization", "task/summarization", key="broader")
    >>> sorted(select_concepts(G, 3))  # NARX, named by one paper, comes last
    ['task/document-summarization', 'task/parsing', 'task/summarization']
    >>> sorted(select_concepts(G, 10))
    ['task/document-summarization', 'task/narx', 'task/parsing', 'task/summarization']
    """
    narrower = defaultdict(list)
    for source, target, key in G.edges(keys=True):
        if key == BROADER:
            narrower[target].append(source)
    if not narrower:
        return None
    order = lambda n: (-papers_reached(G.nodes[n]), str(n))  # noqa: E731
    below = {child for children in narrower.values() for child in children}
    # Roots named by too few papers come only after all the others: a small graph still opens on its
    # roots, a conference's never on a one-paper one.
    roots = sorted((n for n, kind in G.nodes(data="kind") if kind != PAPER and n not in below),
                   key=lambda n: (_support(G.nodes[n]) < MIN_ROOT_PAPERS, *order(n)))
    keep: dict = {}  # in order: each top concept, then its narrower ones
    for root in roots[:OVERVIEW_CONCEPTS]:
        largest = [n for n in sorted(narrower.get(root, ()), key=order) if papers_reached(G.nodes[n]) >= 2]  # a one-paper name says little
        for node in [root] + largest[:OVERVIEW_NARROWER]:
            if len(keep) < min(max_nodes, OVERVIEW_NODES):
                keep[node] = None
    return list(keep)



def select_overview(G: nx.MultiDiGraph, max_nodes: int) -> set:
    """The at most ``max_nodes`` nodes of ``G`` an overview shows.

    All of them if they fit. Otherwise the entities mentioned by the most
    papers fill half the budget, then the papers linked to most of those
    entities fill the rest; budget still left (a corpus with few papers)
    takes the next entities, then the remaining papers, in the same order.

    >>> G = nx.MultiDiGraph()
    >>> G.add_nodes_from([("task/a", {"kind": "Task", "papers": 2}),
    ...                   ("task/b", {"kind": "Task", "papers": 1}),
    ...                   ("paper/1", {"kind": "Paper"}), ("paper/2", {"kind": "Paper"})])
    >>> _ = G.add_edges_from([("paper/1", "task/a"), ("paper/2", "task/a"), ("paper/2", "task/b")])
    >>> sorted(select_overview(G, 3))
    ['paper/1', 'paper/2', 'task/a']
    """
    if G.number_of_nodes() <= max_nodes:
        return set(G)
    entities = sorted((n for n, kind in G.nodes(data="kind") if kind != PAPER),
                      key=lambda n: (-G.nodes[n].get("papers", 0), -G.degree(n), str(n)))
    keep = set(entities[: max(1, max_nodes // 2)])
    linked = Counter(p for e in keep for p in set(G.predecessors(e)) if G.nodes[p].get("kind") == PAPER)
    best_papers = sorted(linked, key=lambda p: (-linked[p], str(p)))
    rank = {p: i for i, p in enumerate(best_papers)}
    # First each entity's best paper, so that no shown entity floats alone; then the best papers.
    firsts = (min((p for p in G.predecessors(e) if p in rank), key=rank.get, default=None)
              for e in entities if e in keep)
    for paper in [p for p in firsts if p is not None] + best_papers:
        if len(keep) >= max_nodes:
            break
        keep.add(paper)
    papers = sorted((n for n, kind in G.nodes(data="kind") if kind == PAPER),
                    key=lambda n: (-G.degree(n), str(n)))
    for node in entities + papers:
        if len(keep) >= max_nodes:
            break
        keep.add(node)
    return keep
