"""Related methods: given an entity, the methods that share its tasks and datasets, with reasons.

The score of a candidate ``B`` for a query ``A`` adds up:

- variants: ``3.0`` when one is a variant of the other (``E-GRPO kg:variantOf
  GRPO``), ``1.5`` when both are variants of the same method;
- tasks and datasets shared across different papers, each weighted by its specificity
  ``idf = log(1 + N / papers(item))`` (sharing "RULER" says more than sharing
  "LLMs");
- co-mention: ``1.0`` per paper that mentions both;
- comparison: ``1.0`` per paper that proposes one and compares with the other.

Every part of the score is returned with the items behind it.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import pyoxigraph as ox

from . import vocab
from .lookup import read_entities
from .queries import kg_terms, view, view_with
from .store import run_query

VARIANT_WEIGHT = 3.0
SIBLING_WEIGHT = 1.5
CO_MENTION_WEIGHT = 1.0
COMPARISON_WEIGHT = 1.0

@dataclass
class Related:
    label: str
    type: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    shared: dict[str, list[str]] = field(default_factory=dict)

    def reason(self) -> str:
        bits = []
        for part in ("variant", "compared", "tasks", "datasets", "co-mentioned"):
            if self.shared.get(part):
                items = self.shared[part]
                shown = ", ".join(items[:4]) + (f" +{len(items) - 4}" if len(items) > 4 else "")
                bits.append(shown if part == "variant" else f"{part}: {shown}")
        return "; ".join(bits)


@dataclass
class _Index:
    label: dict[str, str] = field(default_factory=dict)
    type: dict[str, str] = field(default_factory=dict)
    papers_of: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    edges: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    bases: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # variant -> what it varies


def _index(store: ox.Store) -> _Index:
    index = _Index()
    edges = view_with("related-edges", property=kg_terms(vocab.ROLES), **{"class": kg_terms(vocab.ENTITY_TYPES)})
    for row in run_query(store, edges):
        paper, role, entity = row["paper"].value, row["role"].value, row["entity"].value
        index.label[entity] = row["label"].value
        index.type[entity] = row["type"].value
        index.papers_of[entity].add(paper)
        index.edges[paper][role].add(entity)
    for row in run_query(store, view("variants")):
        index.bases[row["variant"].value].add(row["base"].value)
    return index


def related(store: ox.Store, name: str, *, k: int = 10, type: str = "Method") -> tuple[str, list[Related]]:
    """The ``k`` entities of ``type`` most related to the one named ``name``, best first.

    Returns the query entity's label and the ranked list.
    """
    entities = read_entities(store)
    query = entities.find(name)
    index = _index(store)
    if query not in index.type:  # no paper links it: it shares nothing
        return entities.label[query], []
    n_papers = len(index.edges) or 1
    idf = {e: math.log(1 + n_papers / len(p)) for e, p in index.papers_of.items()}

    def items(papers: set[str], roles: tuple[str, ...]) -> set[str]:
        return {i for paper in papers for role in roles for i in index.edges[paper][role]}

    results = []
    for candidate, candidate_type in index.type.items():
        if candidate == query or (type and candidate_type != type):
            continue
        both = index.papers_of[query] & index.papers_of[candidate]
        # Tasks and datasets count when shared across different papers: within one paper,
        # everything shares everything, and that is what co-mention already scores.
        own, theirs = index.papers_of[query] - both, index.papers_of[candidate] - both
        shared_tasks = items(own, ("addresses",)) & items(theirs, ("addresses",))
        shared_datasets = items(own, ("evaluatesOn", "introduces")) & items(theirs, ("evaluatesOn", "introduces"))
        compared = {p for p in both
                    if (query in index.edges[p]["proposes"] and candidate in index.edges[p]["comparesWith"])
                    or (candidate in index.edges[p]["proposes"] and query in index.edges[p]["comparesWith"])}
        if query in index.bases[candidate]:
            variant = [f"variant of {index.label[query]}"]
        elif candidate in index.bases[query]:
            variant = [f"{index.label[query]} is a variant of it"]
        else:
            variant = [f"both variants of {index.label[b]}" for b in sorted(index.bases[query] & index.bases[candidate])]
        parts = {
            "variant": (VARIANT_WEIGHT if variant and not variant[0].startswith("both") else SIBLING_WEIGHT * len(variant)),
            "tasks": sum(idf[t] for t in shared_tasks),
            "datasets": sum(idf[d] for d in shared_datasets),
            "co-mentioned": CO_MENTION_WEIGHT * len(both),
            "compared": COMPARISON_WEIGHT * len(compared),
        }
        score = sum(parts.values())
        if score <= 0:
            continue
        by_specificity = lambda es: [index.label[e] for e in sorted(es, key=lambda e: (-idf[e], index.label[e]))]
        shared = {"variant": variant, "tasks": by_specificity(shared_tasks), "datasets": by_specificity(shared_datasets),
                  "co-mentioned": sorted(both), "compared": sorted(compared)}
        shared["co-mentioned"] = [f"{len(both)} paper{'s' if len(both) != 1 else ''}"] if both else []
        shared["compared"] = [f"in {len(compared)} paper{'s' if len(compared) != 1 else ''}"] if compared else []
        results.append(Related(index.label[candidate], candidate_type, round(score, 3),
                               {p: round(v, 3) for p, v in parts.items() if v}, shared))
    results.sort(key=lambda r: (-r.score, r.label))
    return index.label[query], results[:k]
