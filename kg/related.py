"""Related methods: given an entity, the methods that share its tasks, datasets, papers and concepts, with reasons.

An entity's papers are those that mention it or anything narrower than it
(``skos:broader*``): "diffusion models" reaches the papers on "latent
diffusion models". The score of a candidate ``B`` for a query ``A`` adds up:

- ``variant``: ``3.0`` when one is a variant or a kind of the other (``kg:variantOf``,
  ``skos:broader``), ``1.5 × spec(C)`` per concept ``C`` both are variants or kinds of
  ("both kinds of GAN");
- ``co-mentioned``: papers that mention both, weighted by how much more often than chance
  they do: ``|A ∩ B| × log(N |A ∩ B| / (|A| |B|))`` (pointwise mutual information), so
  that "neural networks", in every other paper, gains little from sharing them;
- ``compared``: ``1.0`` per paper that proposes one and compares with the other;
- ``tasks`` and ``datasets`` shared across different papers: ``3.0 ×`` the cosine of the two
  entities' task (dataset) profiles, each task weighted by its specificity
  ``spec(x) = log(1 + N / papers(x))``: a hub shares something with everything, and its long
  profile divides what it shares;
- ``similar``: ``2.0 × (cos - 0.5) / 0.5`` when the cosine of the two entities' vectors (names and
  sentences, :mod:`kg.similarity`) is above 0.5: GRU and LSTM, never in one abstract, are alike.

``N`` is the number of papers. Candidates below the salience threshold
(:data:`kg.concepts.SALIENCE_THRESHOLD`: one paper, a plain phrase, not proposed)
are left out unless ``min_salience=0``. Ties go to the candidate with more
shared papers, then more papers, never to the alphabet alone.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import pyoxigraph as ox

from . import vocab
from .vocab import node_of_iri
from .concepts import SALIENCE_THRESHOLD
from .lookup import Entities, read_entities
from .queries import kg_terms, view, view_with
from .similarity import Vectors
from .store import run_query

VARIANT_WEIGHT = 3.0
SIBLING_WEIGHT = 1.5
BROADER_WEIGHT = 0.5
PROFILE_WEIGHT = 3.0
CO_MENTION_WEIGHT = 1.0
COMPARISON_WEIGHT = 1.0
SIMILARITY_WEIGHT = 2.0
SIMILARITY_FLOOR = 0.5  # cosines below are what any two names of one field share
PARTS = ("variant", "compared", "co-mentioned", "tasks", "datasets", "similar")


@dataclass
class Related:
    label: str
    type: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    shared: dict[str, list[str]] = field(default_factory=dict)

    def reason(self) -> str:
        bits = []
        for part in PARTS:
            if self.shared.get(part):
                items = self.shared[part]
                shown = ", ".join(items[:4]) + (f" +{len(items) - 4}" if len(items) > 4 else "")
                bits.append(shown if part == "variant" else f"{part}: {shown}")
        return "; ".join(bits)


@dataclass
class _Index:
    label: dict[str, str] = field(default_factory=dict)
    type: dict[str, str] = field(default_factory=dict)
    salience: dict[str, float] = field(default_factory=dict)
    papers_of: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # own and narrower papers
    edges: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    above: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # entity -> what it varies or is a kind of
    n_papers: int = 0
    below: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # the inverse of ``above``


def _index(store: ox.Store, entities: Entities) -> _Index:
    index = _Index()
    index.label, index.type, index.salience = entities.label, entities.type, entities.salience
    edges = view_with("related-edges", property=kg_terms(vocab.ROLES), **{"class": kg_terms(vocab.ENTITY_TYPES)})
    for row in run_query(store, edges):
        paper, role, entity = row["paper"].value, row["role"].value, row["entity"].value
        index.papers_of[entity].add(paper)
        index.edges[paper][role].add(entity)
    index.n_papers = len(index.edges) or 1
    for row in run_query(store, view("variants")):
        index.above[row["variant"].value].add(row["base"].value)
        index.below[row["base"].value].add(row["variant"].value)
    narrower: dict[str, set[str]] = defaultdict(set)
    for row in run_query(store, view("broader-links")):
        index.above[row["narrower"].value].add(row["broader"].value)
        index.below[row["broader"].value].add(row["narrower"].value)
        narrower[row["broader"].value].add(row["narrower"].value)
    own = {e: set(p) for e, p in index.papers_of.items()}
    for entity in list(narrower):  # papers of a concept: its own and those of everything below it
        for child in _closure(narrower, entity):
            index.papers_of[entity] |= own.get(child, set())
    return index


def _profiles(index: _Index, spec: dict[str, float], papers: set[str]) -> tuple[dict[str, float], dict[str, float]]:
    """The tasks and the datasets of ``papers``, each weighted by its specificity."""
    tasks, datasets = {}, {}
    for paper in papers:
        for task in index.edges[paper]["addresses"]:
            tasks[task] = spec.get(task, 0.0)
        for role in ("evaluatesOn", "introduces"):
            for dataset in index.edges[paper][role]:
                datasets[dataset] = spec.get(dataset, 0.0)
    return tasks, datasets


def _cosine(a: dict[str, float], b: dict[str, float], shared: set[str]) -> float:
    """The cosine of two weighted sets over their ``shared`` items: a hub's long list of tasks
    shares something with every list, and is divided by its length."""
    if not shared:
        return 0.0
    return sum(a[x] * b[x] for x in shared) / math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))


def _npmi(both: int, a: int, b: int, n: int) -> float:
    """Normalised pointwise mutual information of two paper sets, in [-1, 1]; 1 when they coincide."""
    if both >= n:
        return 0.0
    return math.log(n * both / (a * b)) / -math.log(both / n)


def _closure(links: dict[str, set[str]], entity: str) -> set[str]:
    """Everything ``links`` lead to from ``entity``, transitively (``entity`` itself left out)."""
    seen, todo = set(), [entity]
    while todo:
        for other in links.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    seen.discard(entity)
    return seen


def _similarities(vectors: Vectors | None, query: str):
    """``cosine(candidate IRI)`` of each candidate with the query (0.0 without vectors)."""
    if vectors is None:
        return lambda candidate: 0.0
    cosines = vectors.similarity(node_of_iri(query))
    return lambda candidate: float(cosines[vectors.row[node]]) if (node := node_of_iri(candidate)) in vectors.row else 0.0


def related(store: ox.Store, name: str, *, k: int = 10, type: str = "Method",
            min_salience: float = SALIENCE_THRESHOLD, vectors: Vectors | None = None) -> tuple[str, list[Related]]:
    """The ``k`` entities of ``type`` most related to the one named ``name``, best first.

    ``vectors`` (the graph's :class:`kg.similarity.Vectors`) add the ``similar`` part; without
    them, similarity is not scored. Returns the query entity's label and the ranked list.
    """
    entities = read_entities(store)
    query = entities.find(name)
    index = _index(store, entities)
    if not index.papers_of.get(query):  # no paper links it: it shares nothing
        return entities.label[query], []
    n = index.n_papers
    spec = {e: math.log(1 + n / len(p)) for e, p in index.papers_of.items() if p}
    query_papers = index.papers_of[query]
    task_profile, dataset_profile = _profiles(index, spec, query_papers)
    below, above = _closure(index.below, query), _closure(index.above, query)
    similarity = _similarities(vectors, query)
    results = []
    for candidate, papers in index.papers_of.items():
        if candidate == query or not papers or (type and index.type.get(candidate) != type):
            continue
        if index.salience.get(candidate, 0.0) < min_salience:
            continue
        both = query_papers & papers
        compared = {p for p in both
                    if (query in index.edges[p]["proposes"] and candidate in index.edges[p]["comparesWith"])
                    or (candidate in index.edges[p]["proposes"] and query in index.edges[p]["comparesWith"])}
        nested = candidate in below or candidate in above
        if candidate in below:  # weighed by how many papers use it: one-paper variants are many
            variant = [f"a kind or variant of {index.label[query]}"]
            variant_score = VARIANT_WEIGHT * min(1.0, math.log2(1 + len(papers)) / 4)
        elif nested:
            variant, variant_score = [f"{index.label[query]} is a kind or variant of it"], BROADER_WEIGHT
        else:
            common = sorted(index.above[query] & index.above[candidate], key=lambda c: -spec.get(c, 0.0))
            variant = [f"both kinds of {index.label[c]}" for c in common]
            variant_score = SIBLING_WEIGHT * max((spec.get(c, 0.0) for c in common), default=0.0) / math.log(1 + n)
        # A concept and what is narrower than it share papers by construction: that says nothing.
        association = 0.0 if nested or not both else _npmi(len(both), len(query_papers), len(papers), n)
        # Tasks and datasets count when shared across different papers: within one paper,
        # everything shares everything, and that is what co-mention already scores.
        own, theirs = query_papers - both, papers - both
        their_tasks, their_datasets = _profiles(index, spec, theirs)
        shared_tasks = set(task_profile) & set(their_tasks) - {query, candidate}
        shared_datasets = set(dataset_profile) & set(their_datasets) - {query, candidate}
        parts = {
            "variant": variant_score,
            "compared": COMPARISON_WEIGHT * len(compared),
            "co-mentioned": CO_MENTION_WEIGHT * association * math.log2(1 + len(both)),
            "tasks": PROFILE_WEIGHT * _cosine(task_profile, their_tasks, shared_tasks) if own else 0.0,
            "datasets": PROFILE_WEIGHT * _cosine(dataset_profile, their_datasets, shared_datasets) if own else 0.0,
            "similar": SIMILARITY_WEIGHT * max(0.0, similarity(candidate) - SIMILARITY_FLOOR) / (1 - SIMILARITY_FLOOR),
        }
        score = sum(parts.values())
        if score <= 0:
            continue
        by_specificity = lambda es: [index.label[e] for e in sorted(es, key=lambda e: (-spec.get(e, 0.0), index.label[e]))]
        shared = {"variant": variant, "tasks": by_specificity(shared_tasks), "datasets": by_specificity(shared_datasets),
                  "co-mentioned": [f"{len(both)} paper{'s' if len(both) != 1 else ''}"] if both and not nested else [],
                  "compared": [f"in {len(compared)} paper{'s' if len(compared) != 1 else ''}"] if compared else [],
                  "similar": [f"{similarity(candidate):.2f}"] if parts["similar"] else []}
        results.append((Related(index.label[candidate], index.type[candidate], round(score, 3),
                                {p: round(v, 3) for p, v in parts.items() if v}, shared),
                        (len(both), len(papers), index.salience.get(candidate, 0.0))))
    results.sort(key=lambda r: (-r[0].score, *(-x for x in r[1]), r[0].label))
    return index.label[query], [r for r, _ in results[:k]]
