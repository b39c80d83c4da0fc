"""Explain: the sentences behind an entity, or behind the links between two entities.

Reads the evidence statements of a built graph (``kg:Statement`` with an
``oa:TextPositionSelector`` into the paper's abstract) and returns each with
the abstract's sentence split around the mention, so a caller can highlight it.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from .lookup import find_entity, labels_of
from . import view, with_values
from ..store import PREFIXES

@dataclass
class Evidence:
    """One sentence behind an edge: ``before + mention + after`` is the sentence as written."""

    subject: str  # IRIs
    relation: str
    object: str
    paper: str
    paper_label: str
    start: int
    end: int
    before: str
    mention: str
    after: str
    confidence: float


def _split(abstract: str, sentence: str, start: int, end: int) -> tuple[str, str, str]:
    at = abstract.find(sentence, max(0, end - len(sentence)))
    if at < 0 or at > start or at + len(sentence) < end:  # not found: show a window around the mention
        at, stop = max(0, start - 120), min(len(abstract), end + 120)
    else:
        stop = at + len(sentence)
    return abstract[at:start], abstract[start:end], abstract[end:stop]


def evidence_of(store: ox.Store, entity: str) -> list[Evidence]:
    """Every evidence statement whose subject or object is the entity with IRI ``entity``."""
    # A VALUES block, not a substitution: pyoxigraph plans the query around the bound entity then.
    rows = store.query(with_values(view("explain-evidence"), "entity", ox.NamedNode(entity)), prefixes=PREFIXES)
    found = []
    for row in rows:
        start, end = int(row["start"].value), int(row["end"].value)
        before, mention, after = _split(row["abstract"].value, row["sentence"].value, start, end)
        found.append(Evidence(row["subject"].value, row["property"].value.rsplit("#", 1)[-1], row["object"].value,
                              row["paper"].value, row["label"].value, start, end, before, mention, after,
                              float(row["confidence"].value)))
    return sorted(found, key=lambda e: (e.paper_label, e.start))


@dataclass
class Definition:
    """What a paper says an entity is (``skos:definition``), and the sentence it says it in."""

    text: str
    sentence: str
    paper: str  # IRI
    paper_label: str


def definition_of(store: ox.Store, entity: str) -> Definition | None:
    """The definition of the entity with IRI ``entity`` (:mod:`kg.link.definitions`), or None."""
    rows = store.query(with_values(view("entity-definition"), "entity", ox.NamedNode(entity)), prefixes=PREFIXES)
    row = next(iter(rows), None)
    if row is None:
        return None
    return Definition(row["text"].value, row["sentence"].value, row["paper"].value, row["label"].value)


def explain(store: ox.Store, name: str, other: str | None = None) -> tuple[dict[str, str], list[Evidence]]:
    """The evidence behind the entity named ``name`` or, with ``other``, behind the links between them.

    Two entities are linked directly (``E-GRPO kg:variantOf GRPO``) or through the papers
    that mention both; direct links come first, then both entities' sentences in shared papers.
    Returns a map from entity IRI to label, and the evidence.
    """
    first = find_entity(store, name)
    found = evidence_of(store, first)
    if other is not None:
        second = find_entity(store, other)
        theirs = evidence_of(store, second)
        direct = [e for e in found if {e.subject, e.object} == {first, second}]
        shared = {e.paper for e in found} & {e.paper for e in theirs}
        via = [e for e in found + theirs if e.paper in shared and e not in direct]
        found = direct + sorted(via, key=lambda e: (e.paper_label, e.start))
    labels = labels_of(store, [first] + ([second] if other is not None else [])
                       + [iri for e in found for iri in (e.subject, e.object)])
    return labels, found


@dataclass
class Explanation:
    """What ``kg explain`` answers: what a paper says each named entity is, and the evidence."""

    labels: dict[str, str]  # IRI -> label
    definitions: list[tuple[str, Definition]]  # (the entity's IRI, what a paper says it is)
    evidence: list[Evidence]

    def as_json(self) -> dict:
        return {"definitions": [{"entity": iri, "label": self.labels.get(iri, iri), **d.__dict__}
                                for iri, d in self.definitions],
                "evidence": [{**e.__dict__, "subject_label": self.labels.get(e.subject, "paper"),
                              "object_label": self.labels.get(e.object, e.object)} for e in self.evidence]}

    def as_text(self, mark=lambda text: f"«{text}»") -> str:
        """The definitions, then the evidence paper by paper, each mention marked by ``mark``."""
        lines = [f"{self.labels.get(iri, iri)}: {d.text}\n  (from {d.paper_label}  <{d.paper}>)"
                 for iri, d in self.definitions]
        if not self.evidence:
            lines.append("No evidence found.")
        paper = None
        for e in self.evidence:
            if e.paper != paper:
                paper = e.paper
                lines.append(f"\n{e.paper_label}  <{e.paper}>")
            edge = f"{self.labels.get(e.subject, 'paper')} {e.relation} {self.labels.get(e.object, e.object)}"
            sentence = " ".join(e.before.split()) + (" " if e.before[-1:].isspace() else "") + mark(e.mention) \
                + (" " if e.after[:1].isspace() else "") + " ".join(e.after.split())
            lines.append(f"  {edge}  [{e.start}:{e.end}]  confidence {e.confidence:.2f}\n    {sentence}")
        return "\n".join(lines)


def explanation(store: ox.Store, name: str, other: str | None = None) -> Explanation:
    """:func:`explain` with what a paper says each of ``name`` and ``other`` is, where one does."""
    labels, evidence = explain(store, name, other)
    named = [find_entity(store, n) for n in (name, other) if n is not None]
    definitions = [(iri, d) for iri in named if (d := definition_of(store, iri)) is not None]
    return Explanation(labels, definitions, evidence)
