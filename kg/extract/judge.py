"""Which mentions are what the readers would label, learned from their abstracts.

kg's extractor takes the span model's entities and adds what its rules find (acronyms, names
written like names, classes of methods, metrics from a lexicon); against the readers' labels the
rules add little recall and cost precision. A logistic model over each mention's features (those
:func:`kg.extract.features.features` computes: its role, type, finding rule, shape, the words around
it, its place in the abstract, its title) trained on the readers' spans of their tuned abstracts
(``bench/annotated/readers.jsonl``, both layers; a mention is right when its span and type are a
reader's) scores each mention, and the build drops those scored below the threshold, except the
mentions a result names as its metric, dataset or method.

The weights ship in ``judge.json`` beside this module (``python bench/mention_judge.py ... --train``
writes them); :func:`prune` runs on numpy alone, after extraction, so that cached extractions are
judged too. Held out, entity F1 of kg's mentions over both layers rises on NeurIPS 2023, ICLR
2017/18 and CoRL 2024 (figures in the README).
"""
from __future__ import annotations

import functools
from pathlib import Path

from ..model import PaperExtraction
from .features import load_weights, probabilities

WEIGHTS = Path(__file__).with_name("judge.json")
PROPOSING = ("proposes", "introduces")  # the roles whose mentions the proposals scorer judges instead


@functools.cache
def model(path: Path = WEIGHTS) -> dict | None:
    """The shipped weights and threshold, or None where none ship (every mention is kept)."""
    return load_weights(path)


def claimed(extraction: PaperExtraction) -> set[int]:
    """The mentions of ``extraction`` a result names (its metric, dataset or method) or the rules propose:
    what a paper claims, which no judge drops."""
    named = {i for r in extraction.results for i in (r.metric, r.dataset, r.subject) if i is not None}
    return named | {i for i, m in enumerate(extraction.mentions) if m.role in PROPOSING}


def prune(extraction: PaperExtraction, weights: dict | None = None) -> int:
    """Drop the mentions of ``extraction`` scored below ``keep`` that no result names and the rules do not
    propose, renumbering what points at mentions (results, links, synonyms); return how many were dropped."""
    weights = weights if weights is not None else model()
    if weights is None or not extraction.mentions:
        return 0
    named = claimed(extraction)
    kept = [i for i, p in enumerate(probabilities(extraction, weights)) if p >= weights["keep"] or i in named]
    if len(kept) == len(extraction.mentions):
        return 0
    new = {old: n for n, old in enumerate(kept)}
    dropped = len(extraction.mentions) - len(kept)
    extraction.mentions = [extraction.mentions[i] for i in kept]
    extraction.links = [link for link in extraction.links if link.head in new and link.tail in new]
    for link in extraction.links:
        link.head, link.tail = new[link.head], new[link.tail]
    extraction.synonyms = [(new[a], new[b], p) for a, b, p in extraction.synonyms if a in new and b in new]
    for result in extraction.results:  # every mention a result names is kept: renumbered, never lost
        result.metric, result.dataset, result.subject = (None if i is None else new[i]
                                                         for i in (result.metric, result.dataset, result.subject))
    return dropped
