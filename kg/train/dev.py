"""How a training run scores the model on dev: by the run-time decoding
(:class:`kg.extract.spans.SpanModel`), exact character spans as ``kg eval scierc`` counts them,
and the blend (:attr:`DevScores.selection`) that chooses the best epoch."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field

from ..vocab import LAYER2_TYPES
from ..evaluate.scier import SCIER_TYPES, score_entities, score_relations
from ..evaluate.scierc import PRF, SciercDoc, Scores, evaluate, evaluate_relations
from ..extract.spans import SpanModel
from .examples import Example


#: The SciERC labels scored on SciERC dev under the kg schema (its Material is not kg's Dataset).
SCIERC_DEV_LABELS = ("Method", "Task", "Metric")


def _figures(prf: PRF) -> list[float]:
    return [round(prf.precision, 4), round(prf.recall, 4), round(prf.f1, 4)]


@dataclass
class DevScores:
    """Micro P/R/F1 on dev.

    Under the scierc schema: entities over SciERC's six types, relations end
    to end over its seven, and the best epoch is the one with the highest sum
    of the two F1s. Under the kg schema: ``entity`` and ``relation`` are SciER
    dev's (exact span and type over Method, Task and Dataset; strict relations
    over the nine types), ``parts["scierc_entity"]`` SciERC dev's exact
    entities over Method, Task and Metric, and the best epoch is the one with
    the highest mean of the three F1s: SciER alone never sees a Metric,
    SciERC alone never a Dataset. With kg's annotated abstracts in training,
    their dev tenth (:func:`readers_dev`) adds ``parts["readers_entity"]``,
    exact entities of both layers in kg's types, to that mean.
    """

    entity: PRF
    relation: PRF
    parts: dict[str, PRF] = field(default_factory=dict)
    per_type: dict[str, PRF] = field(default_factory=dict)

    @property
    def selection(self) -> float:
        if self.parts:  # the kg schema: the mean of every dev figure it has
            figures = [self.entity.f1, self.relation.f1, *(prf.f1 for prf in self.parts.values())]
            return sum(figures) / len(figures)
        return self.entity.f1 + self.relation.f1

    def line(self) -> str:
        e, r = self.entity, self.relation
        name = "SciER " if self.parts else ""
        out = (f"{name}entities P {e.precision:.3f} R {e.recall:.3f} F1 {e.f1:.3f} · {name}relations P "
               f"{r.precision:.3f} R {r.recall:.3f} F1 {r.f1:.3f} · found {e.predicted} entities, {r.predicted} relations")
        if self.per_type:
            out += " · " + " ".join(f"{k} {v.f1:.3f}" for k, v in self.per_type.items())
        for name, prf in self.parts.items():
            out += f" · {name} P {prf.precision:.3f} R {prf.recall:.3f} F1 {prf.f1:.3f}"
        if self.parts:
            out += f" · selection {self.selection:.4f}"
        return out

    def counts(self) -> dict:
        """The counts behind every figure, as plain data: what a checkpoint keeps, so that it loads
        whichever program wrote it (a pickled class is bound to the module path it was saved from)."""
        return {"entity": astuple(self.entity), "relation": astuple(self.relation),
                "parts": {k: astuple(v) for k, v in self.parts.items()},
                "per_type": {k: astuple(v) for k, v in self.per_type.items()}}

    @classmethod
    def from_counts(cls, counts: dict) -> "DevScores":
        return cls(PRF(*counts["entity"]), PRF(*counts["relation"]),
                   {k: PRF(*v) for k, v in counts["parts"].items()},
                   {k: PRF(*v) for k, v in counts["per_type"].items()})

    def figures(self) -> dict[str, list[float]]:
        out = {kind: _figures(prf) for kind, prf in (("entity", self.entity), ("relation", self.relation))}
        out.update({name: _figures(prf) for name, prf in self.parts.items()})
        out.update({f"entity_{name}": _figures(prf) for name, prf in self.per_type.items()})
        return out


def predictions(model: SpanModel, examples: Sequence[Example]) -> list[tuple[list, list]]:
    """Each example's predicted entities ``(start, end, label)`` and typed relations ``(hs, he, head label,
    ts, te, tail label, type)``, as character spans of its text, on its sentences and tokens."""
    documents = [[e.words[s:t] for s, t in e.sentences] for e in examples]
    out = []
    for example, (entities, relations) in zip(examples, model.predict(documents)):
        words = [w for s, t in example.sentences for w in range(s, t)]  # document word -> example token
        chars = [(example.token_chars[words[e.start]][0], example.token_chars[words[e.end - 1]][1]) for e in entities]
        out.append(([(*chars[i], e.label) for i, e in enumerate(entities)],
                    [(*chars[r.head], entities[r.head].label, *chars[r.tail], entities[r.tail].label, r.label)
                     for r in relations]))
    return out


def score(model: SpanModel, examples: Sequence[Example], schema: str = "scierc") -> DevScores:
    """Exact-match entity and end-to-end relation scores of ``model`` on ``examples``, as ``kg eval scierc``
    (and, under the kg schema, :mod:`kg.evaluate.scier`) counts them: character spans of the rebuilt text."""
    found = predictions(model, examples)
    if schema == "scierc":
        docs = [e.doc for e in examples]
        by_key = {e.doc.doc_key: f for e, f in zip(examples, found)}
        by_text = {doc.text: by_key[doc.doc_key][0] for doc in docs}
        entity: Scores = evaluate(docs, by_text.__getitem__)
        relation: Scores = evaluate_relations(
            docs, lambda doc: [(hs, he, ts, te, r) for hs, he, _, ts, te, _, r in by_key[doc.doc_key][1]])
        return DevScores(entity.micro(), relation.micro())
    scier = [(e.doc, f) for e, f in zip(examples, found) if e.corpus == "scier"]
    scierc = [(e.doc, f) for e, f in zip(examples, found) if e.corpus == "scierc"]
    exact, _ = score_entities([d for d, _ in scier], [f[0] for _, f in scier], labels=SCIER_TYPES)
    relation = score_relations([d for d, _ in scier], [f[1] for _, f in scier])
    parts = {}
    readers = [(e.doc, f[0]) for e, f in zip(examples, found) if e.corpus == "readers"]
    if readers:
        parts["readers_entity"] = kg_type_entities(*zip(*readers))
    if scierc:
        by_text = {d.text: f[0] for d, f in scierc}
        parts["scierc_entity"] = evaluate([d for d, _ in scierc], by_text.__getitem__,
                                          labels=SCIERC_DEV_LABELS).micro()
    return DevScores(exact.micro(), relation.micro(), parts, dict(exact.per_label))


def kg_type_entities(docs: Sequence[SciercDoc], found: Sequence[Sequence[tuple[int, int, str]]]) -> PRF:
    """Exact entity P/R/F1 of the character spans ``found`` per document against ``docs``' gold, both
    layers read as kg's types (a class of methods is a Method, of tasks a Task)."""
    def as_kg(spans):
        return sorted({(a, b, LAYER2_TYPES.get(label, label)) for a, b, label in spans})

    gold = [dataclasses.replace(doc, spans=tuple(as_kg(doc.spans))) for doc in docs]
    return score_entities(gold, [as_kg(f) for f in found], labels=("Method", "Task", "Dataset", "Metric"))[0].micro()
