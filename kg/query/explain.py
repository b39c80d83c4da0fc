"""Explain: the sentences behind an entity, or behind the links between two entities.

Reads the statements behind the graph's edges from its tables (:func:`kg.query.graph_index.read_tables`), each a
``kg:Statement`` of the store with the mention's offsets in the paper's abstract, and returns each
with the abstract's sentence split around the mention, so a caller can highlight it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..vocab import node_of_iri
from .lookup import find_entity
from .views import STATEMENT_FIELDS, Tables


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


def evidence_of(tables: Tables, i: int) -> list[Evidence]:
    """Every statement whose subject or object is the entity ``i`` of ``tables``, by paper and offset."""
    t, ids, first, base = tables.t, tables.ids, tables.first, tables.t["base"]
    found = []
    for row, k in tables.statements_about(i):
        subject, relation, other, start, length, confidence = t["paper_statements"][row][k:k + len(STATEMENT_FIELDS)]
        where = tables.evidence_at(row, start, length)
        before, mention, after = _split(t["paper_abstract"][row] or "", where["sentence"] if where else "",
                                        start, start + length)
        found.append(Evidence(base + ids[subject], t["roles"][relation], base + ids[other], base + ids[first + row],
                              t["label"][first + row], start, start + length, before, mention, after, float(confidence)))
    return sorted(found, key=lambda e: (e.paper_label, e.start))


@dataclass
class Definition:
    """What a paper says an entity is (``skos:definition``), and the sentence it says it in."""

    text: str
    sentence: str
    paper: str  # IRI
    paper_label: str


def definition_of(tables: Tables, i: int) -> Definition | None:
    """What a paper says the entity ``i`` of ``tables`` is (:mod:`kg.link.definitions`), or None."""
    found = tables.definition(i)
    if found is None:
        return None
    paper = tables.t["base"] + found["paper"] if found["paper"] else ""
    return Definition(found["text"], found["sentence"], paper, found["title"])


@dataclass
class Named:
    """An entity a person named: its IRI, and the tables it is read from, where it is row ``row``."""

    iri: str
    tables: Tables
    row: int


def named(tables: Tables, name: str) -> Named:
    """The entity named ``name`` (a label or alias, see :func:`kg.query.lookup.find_entity`) in ``tables``."""
    iri = find_entity(tables, name)
    return Named(iri, tables, tables.index_of[node_of_iri(iri)])


def explain(tables: Tables, name: str, other: str | None = None) -> tuple[dict[str, str], list[Evidence]]:
    """The evidence behind the entity named ``name`` or, with ``other``, behind the links between them.

    Two entities are linked directly (``E-GRPO kg:variantOf GRPO``) or through the papers
    that mention both; direct links come first, then both entities' sentences in shared papers.
    Returns a map from entity IRI to label, and the evidence.
    """
    return _explain([named(tables, n) for n in (name, other) if n is not None])


def _explain(entities: list[Named]) -> tuple[dict[str, str], list[Evidence]]:
    first = entities[0]
    found = evidence_of(first.tables, first.row)
    if len(entities) > 1:
        second = entities[1]
        theirs = evidence_of(second.tables, second.row)
        direct = [e for e in found if {e.subject, e.object} == {first.iri, second.iri}]
        shared = {e.paper for e in found} & {e.paper for e in theirs}
        via = [e for e in found + theirs if e.paper in shared and e not in direct]
        found = direct + sorted(via, key=lambda e: (e.paper_label, e.start))
    labels = {}  # the named entities' and their statements' entities', as their tables hold them
    for entity in entities:
        t, base = entity.tables.t, entity.tables.t["base"]
        for iri in {entity.iri} | {iri for e in found for iri in (e.subject, e.object)}:
            i = entity.tables.index_of.get(iri[len(base):]) if iri.startswith(base) else None
            if i is not None and i < entity.tables.first:
                labels[iri] = t["label"][i]
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


def explanation(tables: Tables, name: str, other: str | None = None) -> Explanation:
    """:func:`explain` with what a paper says each of ``name`` and ``other`` is, where one does."""
    entities = [named(tables, n) for n in (name, other) if n is not None]
    labels, evidence = _explain(entities)
    definitions = [(e.iri, d) for e in entities if (d := definition_of(e.tables, e.row)) is not None]
    return Explanation(labels, definitions, evidence)
