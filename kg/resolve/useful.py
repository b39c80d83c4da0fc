"""Which resolved entities are useful nodes, learned from the readers' abstracts.

The mention judge (:mod:`kg.extract.judge`) reads one mention at a time. Some names are poor nodes
wherever they stand: hardware ("GPU", "NVIDIA"), fragments ("silico"), generic phrases ("visual
models", "alignment mechanism"), words used in another sense ("manipulation" in strategic
classification). What tells them apart is every mention at once: a logistic model over an entity's
mean span vector (what the span model's encoder read of its own words, over all its mentions, before
any centring, so that a small corpus reads as a large one) and the shape of its name (:data:`FEATURES`).

It was fitted on the readers' labels (``bench/annotated/readers.jsonl``, both layers) of the
tuned abstracts: an entity is useful where the readers labelled most of the places its names stand
in their abstracts. ``bench/entity_judge.py`` fits it, chooses its threshold on the tuned part, and
prints the held-out figures; the weights ship in ``useful.json`` beside this module. The build drops
an entity scored below the threshold unless a paper proposes it or a result names it; its mentions
then resolve to nothing and add nothing to the graph.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..extract.features import load_weights
from ..extract.judge import claimed
from ..extract.spans import encoder_digest
from ..keys import is_acronym_like, is_category, is_generic_key
from ..model import Entity, PaperExtraction
from ..similarity import pooled_contexts
from ..vocab import ENTITY_TYPES

WEIGHTS = Path(__file__).with_name("useful.json")
KINDS = ENTITY_TYPES
#: The shape of an entity's name and its reach; then its mean span vector.
FEATURES = ("log papers", "log names", "acronym", "words", "capital inside", "digit", "class of things",
            "generic", "no vector", *(f"type {kind}" for kind in KINDS))


def name_features(entity: Entity) -> list[float]:
    """:data:`FEATURES` but the vector's absence, for one entity."""
    label = entity.label
    papers = len({paper for paper, _ in entity.mentions})
    return [np.log1p(papers), np.log1p(1 + len(entity.aliases)), float(is_acronym_like(label)),
            float(len(label.split())), float(any(c.isupper() for c in label[1:])), float(any(c.isdigit() for c in label)),
            float(is_category(label)), float(is_generic_key(entity.key))]


def features(entities: list[Entity], extractions: list[PaperExtraction]) -> np.ndarray:
    """One row per entity: :data:`FEATURES`, then its mean span vector of unit length (zeros, and
    "no vector" set, where the encoder read none of its mentions)."""
    spans, _ = pooled_contexts(entities, {ex.paper.id: ex for ex in extractions}, centred=False)
    if spans is None:
        spans = np.zeros((len(entities), 0), dtype=np.float32)
    has = np.linalg.norm(spans, axis=1) > 0 if spans.shape[1] else np.zeros(len(entities), dtype=bool)
    rows = [name_features(e) + [float(not has[i])] + [float(e.type == kind) for kind in KINDS]
            for i, e in enumerate(entities)]
    return np.hstack([np.asarray(rows, dtype=np.float64).reshape(len(entities), len(FEATURES)), spans.astype(np.float64)])


@functools.cache
def model(path: Path = WEIGHTS) -> dict | None:
    """The shipped weights, or None where none ship (every entity is kept)."""
    return load_weights(path, FEATURES)


def scores(rows: np.ndarray, weights: dict) -> np.ndarray:
    """The probability that each entity of ``rows`` (:func:`features`) is a useful node. Rows whose
    vectors another encoder read than the one the weights record (``encoder``: the shipped one's digest,
    :func:`kg.extract.spans.encoder_digest`), or whose vector has another width, are scored on their
    names alone: two encoders' states are not in the same space."""
    mean, scale, coef = (np.asarray(weights[k], dtype=np.float64) for k in ("mean", "scale", "coef"))
    fitted_on = weights.get("encoder")
    other_encoder = bool(fitted_on) and fitted_on != encoder_digest()
    if other_encoder or rows.shape[1] != len(coef):
        rows = np.hstack([rows[:, :len(FEATURES)], np.tile(mean[len(FEATURES):], (len(rows), 1))])
    z = ((rows - mean) / scale) @ coef + float(weights["intercept"])
    return 1 / (1 + np.exp(-z))


def keep_useful(entities: list[Entity], extractions: list[PaperExtraction],
                weights: dict | None = None) -> tuple[list[Entity], list[Entity]]:
    """``(kept, dropped)``: the entities scored below the model's threshold are dropped, except those a
    paper proposes or a result names (what a paper claims is kept whatever it is called)."""
    weights = weights if weights is not None else model()
    if weights is None or not entities:
        return entities, []
    claims = {(ex.paper.id, i) for ex in extractions for i in claimed(ex)}
    p = scores(features(entities, extractions), weights)
    kept, dropped = [], []
    for entity, score in zip(entities, p):
        keep = score >= weights["threshold"] or any(ref in claims for ref in entity.mentions)
        (kept if keep else dropped).append(entity)
    return kept, dropped
