"""What the explorer opens on when a graph has more nodes than it draws: a map of the field's
topics (:func:`field_map`) or, where papers share too little to make one, its most mentioned
entities and their papers (:func:`select_overview`)."""
from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations

import igraph
import networkx as nx

from kg.query.tables import PAPER
from kg.strings import fold
from kg.vocab import TYPES

#: The kinds a topic is made of: what papers work on, with and on; not the metrics, which measure any of them.
TOPIC_KINDS = frozenset(t.name for t in TYPES if t.role != "measures")
MIN_MEMBER_PAPERS = 3  # an entity fewer papers name says too little about which ones go together
MIN_SHARED_PAPERS = 2  # two entities one paper names together are not yet a pair
#: The resolution of the communities' modularity: above 1, smaller communities. At 1, ICLR 2017/18's
#: deep-learning papers are one community of 533; at 1.5 they split into RNNs and language models, GANs,
#: RL, optimisers, CNNs... and NeurIPS 2023's into RL, diffusion models, LLMs, GNNs, federated learning...
RESOLUTION = 1.5
#: A topic is named by members that mostly belong to it: more than this share of an entity's papers
#: fall in the topic. "machine learning", "neural networks" and (ICLR 2017/18) "CNN" spread over every
#: topic (0.3-0.45 of their papers in their largest one, on both corpora) and name none.
NAME_SHARE = 0.6
NAME_MEMBERS = 2  # names per topic: "diffusion models · text-to-image"
MIN_TOPIC_PAPERS = 5
#: Leiden's passes at most: a bound on the work, where networkx's Louvain (3.6) loops for ever on some
#: graphs, a synthetic 20,000-abstract corpus's among them. NeurIPS 2023's and ICLR 2017/18's
#: communities are those of Leiden run until a pass moves nothing; of that synthetic corpus, 18 of
#: its 6,728 entities fall elsewhere.
LEIDEN_PASSES = 10
#: Co-occurrence weights are made integers at this scale: igraph keeps a community's weight by adding
#: and taking away its nodes' weights, which for integers is exact, so a node never moves back and
#: forth between two communities on rounding.
WEIGHT_SCALE = 10**6
MAX_TOPICS = 80  # the page draws those that fit its canvas, the largest first
TOPIC_MEMBERS = 60  # members a topic lists, the most telling first


@dataclass(frozen=True)
class Topic:
    """A community of entities that papers name together, and the papers mostly about it."""

    id: str  # "topic/1": the largest first
    name: str  # its most telling members' labels, joined by " · "
    papers: int  # papers whose entities mostly fall in it
    members: tuple[tuple[str, int], ...]  # (entity, its papers in the topic), most telling first


def field_map(G: nx.MultiDiGraph) -> list[Topic]:
    """The topics of ``G``: its entities of :data:`TOPIC_KINDS` that :data:`MIN_MEMBER_PAPERS`
    papers name, grouped into communities (Louvain, at :data:`RESOLUTION`) of the graph that joins
    two entities by how often papers name both (the Ochiai coefficient: shared papers over the
    geometric mean of each one's). Each paper belongs to the topic most of its entities fall in;
    a topic is sized by those papers and named by its most telling members: those with most of
    their papers in it, by papers in it times that share. Topics of :data:`MIN_TOPIC_PAPERS`
    papers or more, the largest first; the same on every run.

    >>> G = nx.MultiDiGraph()
    >>> for p, names in enumerate(2 * [("gan", "cifar"), ("gan", "mnist"), ("gan", "cifar", "mnist")]
    ...                           + 2 * [("rl", "atari"), ("rl", "mujoco"), ("rl", "atari", "mujoco")]):
    ...     G.add_node(f"paper/{p}", kind="Paper")
    ...     for name in names:
    ...         G.add_node(f"method/{name}", kind="Method", label=name.upper())
    ...         _ = G.add_edge(f"paper/{p}", f"method/{name}", key="uses")
    >>> [(t.id, t.name, t.papers, len(t.members)) for t in field_map(G) if t.papers]
    [('topic/1', 'GAN · CIFAR', 6, 3), ('topic/2', 'RL · ATARI', 6, 3)]
    """
    papers_of = defaultdict(set)
    for paper, entity in G.edges():
        if G.nodes[paper].get("kind") == PAPER and G.nodes[entity].get("kind") in TOPIC_KINDS:
            papers_of[entity].add(paper)
    members = sorted(e for e, papers in papers_of.items() if len(papers) >= MIN_MEMBER_PAPERS)
    named = defaultdict(list)  # paper -> its members, in sorted order
    for entity in members:
        for paper in papers_of[entity]:
            named[paper].append(entity)
    shared = Counter(pair for entities in named.values() for pair in combinations(sorted(entities), 2))
    pairs = sorted((a, b, n / math.sqrt(len(papers_of[a]) * len(papers_of[b])))
                   for (a, b), n in shared.items() if n >= MIN_SHARED_PAPERS)
    communities = sorted(_communities(members, pairs), key=lambda c: (-len(c), c[0]))
    community_of = {e: i for i, c in enumerate(communities) for e in c}
    papers_in = defaultdict(set)
    for paper in sorted(named, key=str):
        votes = Counter(community_of[e] for e in named[paper])
        papers_in[min(votes, key=lambda i: (-votes[i], i))].add(paper)
    topics = []
    for i, community in enumerate(communities):
        papers = papers_in[i]
        if len(papers) < MIN_TOPIC_PAPERS:
            continue
        inside = {e: len(papers_of[e] & papers) for e in community}
        telling = sorted(community, key=lambda e: (-inside[e] ** 2 / len(papers_of[e]), e))
        topics.append((papers, telling, inside))
    topics.sort(key=lambda topic: (-len(topic[0]), topic[1][0]))
    return [Topic(f"topic/{n}", _name(G, telling, inside, papers_of), len(papers),
                  tuple((e, inside[e]) for e in telling[:TOPIC_MEMBERS]))
            for n, (papers, telling, inside) in enumerate(topics[:MAX_TOPICS], start=1)]


def _communities(nodes: list, pairs: list[tuple]) -> list[list]:
    """The communities of the graph of ``nodes`` joined by ``pairs`` (node, node, weight): Leiden's,
    maximising modularity at :data:`RESOLUTION`, each a sorted list; the same on every run.

    >>> _communities(list("abcdef"), [("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 1.0),
    ...                                ("d", "e", 1.0), ("e", "f", 1.0), ("d", "f", 1.0), ("c", "d", 0.1)])
    [['a', 'b', 'c'], ['d', 'e', 'f']]
    """
    position = {node: i for i, node in enumerate(nodes)}
    graph = igraph.Graph(n=len(nodes), edges=[(position[a], position[b]) for a, b, _ in pairs])
    igraph.set_random_number_generator(random.Random(7))  # Leiden visits nodes in random order
    found = graph.community_leiden(objective_function="modularity", resolution=RESOLUTION,
                                   weights=[max(1, round(weight * WEIGHT_SCALE)) for *_, weight in pairs],
                                   n_iterations=LEIDEN_PASSES)
    return sorted(sorted(nodes[i] for i in community) for community in found)


def _name(G: nx.MultiDiGraph, telling: list, inside: dict, papers_of: dict) -> str:
    """The labels of a topic's first :data:`NAME_MEMBERS` telling members with more than
    :data:`NAME_SHARE` of their papers in it, skipping one that another's name holds ("language
    models" beside "LLM", also known as "large language models"); its first member if none has."""
    chosen = []
    for entity in telling:
        if inside[entity] <= NAME_SHARE * len(papers_of[entity]):
            continue
        data = G.nodes[entity]
        names = {fold(n) for n in [data.get("label", entity), *(data.get("aliases") or [])]}
        if any(a in b or b in a for a in names for _, taken in chosen for b in taken):
            continue
        chosen.append((str(data.get("label", entity)), names))
        if len(chosen) == NAME_MEMBERS:
            break
    return " · ".join(label for label, _ in chosen) or str(G.nodes[telling[0]].get("label", telling[0]))


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
