"""The learned relations that become kg's links, read as kg's relations through SciERC's or
SciER's (``kg.vocab.SCIERC_RELATION``, ``SCIER_TO_KG``, from the table of relations).

``span_model_links`` turns the span model's relations (:mod:`.spans`) into
links between kg's mentions; ``build`` uses it. ``RelationModel`` is the first
round's classifier, kept as the baseline ``kg eval scierc`` compares against:
for every ordered pair of mentions in a sentence (``a`` before ``b``) it
predicts one of SciERC's relation types and its direction (``USED-FOR>``: a
is used for b; ``USED-FOR<``: b for a), or ``NONE``, by a multinomial
logistic regression over the pair's types, the words between and around
them, their heads and the dependency path between them.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from spacy.tokens import Span, Token

from ..model import Link
from ..vocab import RELATION_TYPES, SCIER_SYNONYM, SCIER_TO_KG, SCIERC_RELATION

#: Where the trained model lives in the package.
MODEL_FILE = Path(__file__).parent / "relations" / "model.npz"
NONE = "NONE"


def _distance(n: int) -> str:
    return str(n) if n < 3 else "3-4" if n < 5 else "5-7" if n < 8 else "8-12" if n < 13 else "13+"


def _path(a: Token, b: Token) -> tuple[str, str]:
    """The dependency path from ``a`` up to the lowest common head and down to ``b``, and that head's lemma."""
    up = [a, *a.ancestors]
    down = [b, *b.ancestors]
    common = next((t for t in up if t in down), None)
    if common is None:
        return "none", ""
    rising = [t.dep_ for t in up[: up.index(common)]]
    falling = [t.dep_ for t in down[: down.index(common)]]
    return "^".join(rising) + "|" + "v".join(reversed(falling)), common.lemma_.lower()


def pair_features(a: Span, a_label: str, b: Span, b_label: str, others: int = 0) -> list[str]:
    """The features of the pair (``a`` before ``b`` in one sentence), as strings.

    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = load_pipeline()("We use CRFs for parsing.")
    >>> features = pair_features(doc[2:3], "Method", doc[4:5], "Task")
    >>> "between=for" in features, "types=Method>Task" in features
    (True, True)
    """
    doc = a.doc
    between = doc[a.end : b.start]
    path, common = _path(a.root, b.root)
    words = [t.lower_ for t in between if not t.is_space]
    features = [f"types={a_label}>{b_label}", f"a={a_label}", f"b={b_label}", f"distance={_distance(len(words))}",
                f"others={min(others, 3)}", f"ahead={a.root.lemma_.lower()}", f"bhead={b.root.lemma_.lower()}",
                f"path={path}", f"common={common}", f"path+types={path}|{a_label}>{b_label}",
                f"before={doc[a.start - 1].lower_ if a.start > 0 else '<s>'}",
                f"after={doc[b.end].lower_ if b.end < len(doc) else '</s>'}"]
    features += [f"between={w}" for w in set(words)]
    if words:
        features += [f"first={words[0]}", f"last={words[-1]}", f"first+types={words[0]}|{a_label}>{b_label}"]
        features += [f"bigram={x}_{y}" for x, y in zip(words, words[1:])]
    else:
        features.append("adjacent")
    if len(words) <= 2:
        features.append(f"short={'_'.join(words)}|{a_label}>{b_label}")
    return features


def candidate_pairs(mentions: Sequence[tuple[Span, str]]) -> Iterable[tuple[int, int, int]]:
    """The ordered pairs (i, j) of mentions in one sentence that do not overlap, ``i`` first, and how
    many mentions lie between them."""
    order = sorted(range(len(mentions)), key=lambda i: (mentions[i][0].start, mentions[i][0].end))
    for x, i in enumerate(order):
        a = mentions[i][0]
        for y in range(x + 1, len(order)):
            j = order[y]
            b = mentions[j][0]
            if b.start < a.end or a.sent.start != b.sent.start:
                continue
            yield i, j, sum(1 for z in order[x + 1 : y] if mentions[z][0].start >= a.end and mentions[z][0].end <= b.start)


class RelationModel:
    """The weights of a trained classifier, with the feature index and the class names."""

    def __init__(self, features: dict[str, int], classes: list[str], weights: np.ndarray, bias: np.ndarray):
        self.features, self.classes, self.weights, self.bias = features, classes, weights, bias

    def probabilities(self, feature_lists: list[list[str]]) -> np.ndarray:
        """One row of class probabilities per list of features."""
        scores = np.tile(self.bias, (len(feature_lists), 1)).astype(np.float32)
        for row, features in enumerate(feature_lists):
            columns = [self.features[f] for f in features if f in self.features]
            if columns:
                scores[row] += self.weights[columns].sum(axis=0)
        scores -= scores.max(axis=1, keepdims=True)
        exp = np.exp(scores)
        return exp / exp.sum(axis=1, keepdims=True)

    def predict(self, mentions: Sequence[tuple[Span, str]], *, threshold: float = 0.5) -> list[tuple[int, int, str, float]]:
        """``(head, tail, SciERC type, probability)`` for each pair of ``mentions`` (span, SciERC label)
        the model relates with at least ``threshold``."""
        pairs = list(candidate_pairs(mentions))
        if not pairs:
            return []
        probabilities = self.probabilities([pair_features(mentions[i][0], mentions[i][1], mentions[j][0],
                                                          mentions[j][1], others) for i, j, others in pairs])
        found = []
        for (i, j, _), row in zip(pairs, probabilities):
            best = int(row.argmax())
            name = self.classes[best]
            if name == NONE or row[best] < threshold:
                continue
            label, direction = name[:-1], name[-1]
            head, tail = (i, j) if direction == ">" else (j, i)
            found.append((head, tail, label, float(row[best])))
        return found

    @classmethod
    def load(cls, path: str | Path) -> RelationModel:
        with np.load(path) as data:
            meta = json.loads(data["meta"].tobytes().decode())
            weights, bias = data["weights"].astype(np.float32), data["bias"].astype(np.float32)
        return cls({f: i for i, f in enumerate(meta["features"])}, meta["classes"], weights, bias)


@functools.lru_cache(maxsize=None)
def load_relation_model(path: str | Path = MODEL_FILE) -> RelationModel | None:
    """The shipped model, loaded once per process; None when there is none."""
    return RelationModel.load(path) if Path(path).exists() else None


def to_kg_relation(label: str, head_type: str) -> tuple[str, bool] | None:
    """Our relation for a SciERC or SciER type between a head of ``head_type`` and its tail, and
    whether the two swap; None for types we have no counterpart for (SciERC's CONJUNCTION, SciER's
    Synonym-Of, which is evidence that two names are one entity, not a relation).

    >>> to_kg_relation("EVALUATE-FOR", "Dataset"), to_kg_relation("EVALUATE-FOR", "Metric")
    (('evaluatedOn', True), ('evaluates', False))
    >>> to_kg_relation("Benchmark-For", "Dataset"), to_kg_relation("SubTask-Of", "Task"), to_kg_relation("Synonym-Of", "Method")
    (('benchmarkFor', False), ('hyponymOf', False), None)
    """
    if label in SCIER_TO_KG:
        return SCIER_TO_KG[label], False
    for relation, (scierc, swap) in SCIERC_RELATION.items():
        if scierc == label and relation not in ("evaluatedOn", "evaluates", "outperforms"):
            return relation, swap
    if label == "EVALUATE-FOR":
        return ("evaluates", False) if head_type == "Metric" else ("evaluatedOn", True)
    return None


def _model_pairs(mentions) -> Iterable[tuple[int, int, str, float]]:
    """The span model's relations (``doc._.relations``, set by :mod:`.spans`) as ``(head, tail, label,
    probability)`` between ``mentions``' indices. A model entity stands for the mention with the same
    tokens or, failing that, the mention sharing its root word (kg trims "the", cuts at brackets)."""
    if not mentions:
        return
    doc = mentions[0].span.doc
    ents = list(doc.ents)
    exact = {(m.span.start, m.span.end): i for i, m in enumerate(mentions)}
    by_root = {m.span.root.i: i for i, m in enumerate(mentions)}

    def mention_of(ent) -> int | None:
        found = exact.get((ent.start, ent.end))
        return found if found is not None else by_root.get(ent.root.i)

    for head_ent, tail_ent, label, probability in doc._.relations:
        head, tail = mention_of(ents[head_ent]), mention_of(ents[tail_ent])
        if head is not None and tail is not None and head != tail:
            yield head, tail, label, probability


def span_model_links(mentions) -> list:
    """The span model's relations between ``mentions`` (``kg.model.Mention`` objects, their roles
    set) in our relations, one per pair. Confidence is the model's probability."""
    sentence_of = {sent.start: n for n, sent in enumerate(mentions[0].span.doc.sents)} if mentions else {}
    related = set()
    found = []
    for head, tail, label, probability in _model_pairs(mentions):
        if frozenset((head, tail)) in related:
            continue
        mapped = to_kg_relation(label, mentions[head].label)
        if mapped is None:
            continue
        relation, swap = mapped
        if swap:
            head, tail = tail, head
        heads, tails = RELATION_TYPES[relation]
        if mentions[head].label in heads and mentions[tail].label in tails:
            related.add(frozenset((head, tail)))
            found.append(Link(head, relation, tail, sentence_of[mentions[tail].span.sent.start], probability))
    return found


def span_model_synonyms(mentions) -> list[tuple[int, int, float]]:
    """The pairs of ``mentions`` the span model reads as one thing (SciER's Synonym-Of), with its
    probability: ``kg.model.PaperExtraction.synonyms``."""
    return [(head, tail, round(probability, 3)) for head, tail, label, probability in _model_pairs(mentions)
            if label == SCIER_SYNONYM]
