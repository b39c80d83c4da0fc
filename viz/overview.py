"""What the explorer opens on when a graph has more nodes than it draws: a map of the field's
topics (:func:`field_map`), communities of papers that read alike, or, where papers share too
little to make one, its most mentioned entities and their papers (:func:`select_overview`)."""
from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import networkx as nx

from kg.keys import is_acronym_like
from kg.query.tables import PAPER
from kg.strings import fold
from kg.vocab import TYPES

#: The kinds a topic is made of: what papers work on, with and on; not the metrics, which measure any of them.
TOPIC_KINDS = frozenset(t.name for t in TYPES if t.role != "measures")
MIN_MEMBER_PAPERS = 3  # an entity fewer papers name says too little about what a topic is
#: The resolution of the communities' modularity: above 1, smaller communities. At 2, NeurIPS 2023's
#: 3,218 papers fall into 34 topics (RL, optimisers, LLMs, segmentation, bandits, NeRF, GNNs...) and
#: ICLR 2017/18's 1,400 into 24; at 1 into 17 and 12, of which several join two fields.
RESOLUTION = 2.0
#: A topic is named by members that mostly belong to it: more than this share of an entity's papers
#: fall in the topic. "machine learning", "neural networks" and (ICLR 2017/18) "CNN" spread over every
#: topic (0.3-0.45 of their papers in their largest one, on both corpora) and name none.
NAME_SHARE = 0.6
NAME_MEMBERS = 2  # names per topic: "diffusion models · text-to-image"
MIN_TOPIC_PAPERS = 5  # a community of fewer papers joins the topic it is most similar to
#: Leiden's passes at most: a bound on the work, where networkx's Louvain (3.6) loops for ever on some
#: graphs, a synthetic 20,000-abstract corpus's among them.
LEIDEN_PASSES = 10
#: Similarity weights are made integers at this scale: igraph keeps a community's weight by adding
#: and taking away its nodes' weights, which for integers is exact, so a node never moves back and
#: forth between two communities on rounding.
WEIGHT_SCALE = 10**6
MAX_TOPICS = 80  # the page draws those that fit its canvas, the largest first
TOPIC_MEMBERS = 60  # members a topic lists, the most telling first


@dataclass(frozen=True)
class Topic:
    """A community of papers that read alike, and the entities most telling of it."""

    id: str  # "topic/1": the largest first
    name: str  # its most telling members' labels, joined by " · "
    papers: int  # papers in it
    members: tuple[tuple[str, int], ...]  # (entity, its papers in the topic), most telling first

    def as_json(self) -> dict:
        """The topic as the explorer's page and the kept tables hold it."""
        return {"id": self.id, "name": self.name, "papers": self.papers, "members": [list(m) for m in self.members]}

    @classmethod
    def from_json(cls, data: dict) -> "Topic":
        return cls(str(data["id"]), str(data["name"]), int(data["papers"]),
                   tuple((str(entity), int(papers)) for entity, papers in data["members"]))


def field_map(G: nx.MultiDiGraph) -> list[Topic]:
    """The topics of ``G``: communities of its papers (Leiden, at :data:`RESOLUTION`) in the graph that
    joins each paper to its similar papers (:mod:`kg.link.similar`: the same words, the same rare
    entities, abstracts that read alike), weighted by their similarity. A community of fewer than
    :data:`MIN_TOPIC_PAPERS` papers joins the topic its papers are most similar to, so every paper
    similar to another is in a topic. A topic's members are the entities of :data:`TOPIC_KINDS` that
    :data:`MIN_MEMBER_PAPERS` papers name, the most telling first: those with most of their papers in
    it, by papers in it times that share; it is named by them (:func:`_name`). The largest first; the
    same on every run.

    >>> G = nx.MultiDiGraph()
    >>> groups = {"gan": ("gan", "cifar"), "rl": ("rl", "atari")}
    >>> for p in range(12):
    ...     topic = "gan" if p < 6 else "rl"
    ...     G.add_node(f"paper/{p}", kind="Paper", similar=[(f"paper/{q}", 0.5) for q in range(12)
    ...                                                      if q != p and (q < 6) == (p < 6)])
    ...     for name in groups[topic]:
    ...         G.add_node(f"method/{name}", kind="Method", label=name.upper())
    ...         _ = G.add_edge(f"paper/{p}", f"method/{name}", key="uses")
    >>> [(t.id, t.name, t.papers, len(t.members)) for t in field_map(G)]
    [('topic/1', 'ATARI · RL', 6, 2), ('topic/2', 'CIFAR · GAN', 6, 2)]
    """
    papers = sorted(n for n, d in G.nodes(data=True) if d.get("kind") == PAPER)
    weights: dict[tuple[str, str], float] = {}
    for paper in papers:
        for other, score, *_ in G.nodes[paper].get("similar") or ():
            if other != paper and G.has_node(other):
                pair = (min(paper, other), max(paper, other))
                weights[pair] = max(weights.get(pair, 0.0), float(score))
    pairs = sorted((a, b, w) for (a, b), w in weights.items() if w > 0)
    communities = _communities(papers, pairs)
    topic_of = _joined(communities, pairs)
    papers_in = defaultdict(set)
    for paper, topic in topic_of.items():
        papers_in[topic].add(paper)
    papers_of = defaultdict(set)
    for paper, entity in G.edges():
        if G.nodes[paper].get("kind") == PAPER and G.nodes[entity].get("kind") in TOPIC_KINDS:
            papers_of[entity].add(paper)
    # Each member's papers in each topic, counted in one pass over its papers.
    inside_of: dict[int, Counter] = defaultdict(Counter)
    for entity in sorted(e for e, named in papers_of.items() if len(named) >= MIN_MEMBER_PAPERS):
        for paper in papers_of[entity]:
            if paper in topic_of:
                inside_of[topic_of[paper]][entity] += 1
    topics = []
    for topic, papers_here in papers_in.items():
        inside = inside_of[topic]
        if not inside:
            continue
        telling = sorted(inside, key=lambda e: (-inside[e] ** 2 / len(papers_of[e]), e))
        topics.append((papers_here, telling, inside))
    topics.sort(key=lambda topic: (-len(topic[0]), topic[1][0]))
    return [Topic(f"topic/{n}", _name(G, telling, inside, papers_of), len(papers_here),
                  tuple((e, inside[e]) for e in telling[:TOPIC_MEMBERS]))
            for n, (papers_here, telling, inside) in enumerate(topics[:MAX_TOPICS], start=1)]


def _joined(communities: list[list], pairs: list[tuple]) -> dict:
    """Each paper's topic (the index of a community of :data:`MIN_TOPIC_PAPERS` papers or more): its
    community's, or for a smaller community, the large one its papers are most similar to (by the sum of
    the weights between them); a small community similar to no large one stays out."""
    community_of = {paper: i for i, community in enumerate(communities) for paper in community}
    large = {i for i, community in enumerate(communities) if len(community) >= MIN_TOPIC_PAPERS}
    pull: dict[int, Counter] = defaultdict(Counter)  # small community -> large community -> weight between
    for a, b, weight in pairs:
        ca, cb = community_of[a], community_of[b]
        if ca not in large and cb in large:
            pull[ca][cb] += weight
        elif cb not in large and ca in large:
            pull[cb][ca] += weight
    topic_of = {}
    for i, community in enumerate(communities):
        target = i if i in large else (min(pull[i], key=lambda c: (-pull[i][c], c)) if pull[i] else None)
        if target is not None:
            topic_of.update(dict.fromkeys(community, target))
    return topic_of


def _communities(nodes: list, pairs: list[tuple]) -> list[list]:
    """The communities of the graph of ``nodes`` joined by ``pairs`` (node, node, weight): Leiden's,
    maximising modularity at :data:`RESOLUTION`, each a sorted list; the same on every run.

    >>> _communities(list("abcdef"), [("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 1.0),
    ...                                ("d", "e", 1.0), ("e", "f", 1.0), ("d", "f", 1.0), ("c", "d", 0.1)])
    [['a', 'b', 'c'], ['d', 'e', 'f']]
    """
    import igraph  # here: a graph whose build kept its map (kg serve's) never needs it, and it takes 35 ms to import

    position = {node: i for i, node in enumerate(nodes)}
    graph = igraph.Graph(n=len(nodes), edges=[(position[a], position[b]) for a, b, _ in pairs])
    igraph.set_random_number_generator(random.Random(7))  # Leiden visits nodes in random order
    found = graph.community_leiden(objective_function="modularity", resolution=RESOLUTION,
                                   weights=[max(1, round(weight * WEIGHT_SCALE)) for *_, weight in pairs],
                                   n_iterations=LEIDEN_PASSES)
    return sorted(sorted(nodes[i] for i in community) for community in found)


def _name(G: nx.MultiDiGraph, telling: list, inside: dict, papers_of: dict) -> str:
    """The names (:func:`_spoken`) of a topic's first :data:`NAME_MEMBERS` telling members with more
    than :data:`NAME_SHARE` of their papers in it, tasks and methods before datasets and models (an area
    is named by what its papers do, not by what they test on), leaving out generic names ("deep
    learning", "neural networks") and one that another's name holds ("language models" beside "LLM",
    also known as "large language models"); its first member if none is left."""
    chosen = []
    for entity in sorted(telling, key=lambda e: G.nodes[e].get("kind") not in NAMING_KINDS):  # stable: telling order within
        data = G.nodes[entity]
        label = str(data.get("label", entity))
        if inside[entity] <= NAME_SHARE * len(papers_of[entity]) or label.casefold() in GENERIC_NAMES:
            continue
        names = {fold(n) for n in [label, *(data.get("aliases") or [])]}
        if any(a in b or b in a for a in names for _, taken in chosen for b in taken):
            continue
        chosen.append((_spoken(label, data.get("aliases") or ()), names))
        if len(chosen) == NAME_MEMBERS:
            break
    return " · ".join(label for label, _ in chosen) or _spoken(str(G.nodes[telling[0]].get("label", telling[0])),
                                                            G.nodes[telling[0]].get("aliases") or ())


#: The kinds a topic is named by first.
NAMING_KINDS = frozenset({"Task", "Method"})
#: Names too broad to tell one topic of a field from another.
GENERIC_NAMES = frozenset({"machine learning", "deep learning", "neural networks", "neural network",
                           "deep neural networks", "artificial intelligence", "ml", "ai", "dl", "dnn", "dnns"})


MAX_ACRONYM = 10  # letters an acronym has at most, and words its long form
_PLAIN = re.compile(r"[A-Za-z][A-Za-z\- ]*[a-z]")  # a long form in words: no quote, bracket or capitalised acronym left


def _spoken(label: str, aliases) -> str:
    """An acronym's long form where one of its names spells it out ("simulation-based inference" for
    SBI, whose letters start its words), else the label: a bare acronym names a topic for those who
    already know it.

    >>> _spoken("SBI", ["simulation-based inference", "SBI"]), _spoken("NeRF", ["neural radiance fields"]), _spoken("GAN", [])
    ('simulation-based inference', 'neural radiance fields', 'GAN')
    """
    if not is_acronym_like(label) and not label.isupper():
        return label
    letters = [c for c in label.casefold() if c.isalpha()]
    letters = letters[:-1] if len(letters) > 2 and letters[-1] == "s" and label[-1] == "s" else letters
    if len(letters) > MAX_ACRONYM:  # no acronym: and the search below grows with its letters
        return label
    for alias in sorted(aliases, key=lambda a: (-len(a), a)):
        words = [w for w in re.split(r"[\s\-–/]+", alias.casefold()) if w]
        if 2 <= len(words) <= MAX_ACRONYM and _PLAIN.fullmatch(alias) and _spells(letters, words):
            return alias
    return label


def _spells(letters: list[str], words: list[str]) -> bool:
    """Whether ``letters`` start ``words`` in order, a word giving one or more of its first letters
    (NeRF: neural, radiance fields), each word at least one."""
    if not words:
        return not letters
    if not letters:
        return False
    word = words[0]
    return any(word[:n] == "".join(letters[:n]) and _spells(letters[n:], words[1:]) for n in range(1, min(len(word), len(letters)) + 1))


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
