"""Which names are the paper's own contributions, learned from the readers' paper layer.

The rules of :mod:`.roles` read "we propose X" and its kin; the readers named, for 1,586 abstracts
(``bench/annotated/papers.jsonl``, its held-out thirds aside), what each paper itself puts forward.
A logistic model over what the extraction already holds (:mod:`.features`: each mention's role by
the rules, its type, the rule that found it, its shape, the words around it, its place and count in
the abstract, how its title names it) scores each name a paper gives: a name scored
at or above the model's threshold is the paper's own (``proposes``, ``introduces`` for a dataset),
and a name the rules proposed that scores below its lower threshold is one the paper ``uses``.
Held out (``python bench/paper_layer.py``), the F1 of the names proposed rises on NeurIPS 2023
(0.713 with the rules alone -> 0.747), ICLR 2017/18 (0.676 -> 0.735) and CoRL 2024 (0.767 -> 0.806):
recall by 0.05-0.08, precision -0.01 to +0.05.

The weights ship in ``proposals.json`` beside this module (``python bench/paper_layer.py ...
--train`` writes them); :func:`settle` runs on numpy alone, after extraction, so that cached
extractions are settled too.
"""
from __future__ import annotations

import functools
from pathlib import Path

from ..model import PaperExtraction
from ..vocab import DEFAULT_ROLE, NEW_ROLE
from .features import load_weights, probabilities

WEIGHTS = Path(__file__).with_name("proposals.json")


@functools.cache
def model(path: Path = WEIGHTS) -> dict | None:
    """The shipped weights and thresholds, or None where none ship (the rules' roles stand)."""
    return load_weights(path)


def settle(extraction: PaperExtraction, weights: dict | None = None) -> None:
    """Settle which names ``extraction`` proposes by the learned scores. A name is all its mentions
    (the same text, in any case), scored by its best: one scored at or above ``propose`` that the
    rules did not propose is proposed at its best-scored mention (its other mentions keep their
    roles: a paper evaluates on the benchmark it introduces); one the rules proposed that scores below
    ``keep`` is used instead."""
    weights = weights if weights is not None else model()
    if weights is None or not extraction.mentions:
        return
    groups: dict[str, list[tuple[float, object]]] = {}
    for m, p in zip(extraction.mentions, probabilities(extraction, weights)):
        if m.label in NEW_ROLE:
            groups.setdefault(m.text.lower(), []).append((float(p), m))
    for group in groups.values():
        p, best = max(group, key=lambda item: item[0])
        proposed = [m for _, m in group if m.role == NEW_ROLE[m.label]]
        if p >= weights["propose"] and not proposed:
            best.role, best.role_confidence = NEW_ROLE[best.label], p
        elif p < weights["keep"]:
            for m in proposed:
                m.role, m.role_confidence = DEFAULT_ROLE[m.label], 1 - p
