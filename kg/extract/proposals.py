"""Which names are the paper's own contributions, learned from the readers' paper layer.

The rules of :mod:`.roles` read "we propose X" and its kin; the readers named, for 1,586 abstracts
(``bench/annotated/papers.jsonl``, its held-out thirds aside), what each paper itself puts forward.
A logistic model over what the extraction already holds (each mention's role by the rules, its
type, the rule that found it, its shape, the words around it in its sentence, where in the
abstract it stands, how often the paper names it, how its title names it) scores each name a paper gives: a name scored
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
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np

from ..keys import is_category
from ..model import PaperExtraction
from ..vocab import DEFAULT_ROLE, ENTITY_TYPES, NEW_ROLE, ROLES

WEIGHTS = Path(__file__).with_name("proposals.json")
RULES = ("ner", "abbreviation-long", "abbreviation-short", "class", "class-model", "name-shape", "method-lexicon",
         "metric-lexicon", "name", "proposed-name")
#: Words before a name, in its sentence, that say whose it is.
BEFORE = {
    "we": {"we"}, "our": {"our", "ours"},
    "propose": {"propose", "proposes", "proposed", "proposing", "introduce", "introduces", "introduced", "introducing",
                "present", "presents", "presented", "presenting", "develop", "develops", "developed", "design",
                "designed", "devise", "build", "construct", "release", "contribute", "create", "curate", "collect"},
    "call": {"call", "called", "dub", "dubbed", "name", "named", "term", "termed", "coined", "namely"},
    "this": {"this", "here", "paper", "work", "novel", "new"},
    "other": {"existing", "previous", "prior", "baseline", "baselines", "standard", "conventional", "popular",
              "state-of-the-art", "sota", "traditional", "recent", "compared", "than", "outperforms",
              "outperform", "over", "against", "like", "such", "including", "e.g.", "e.g"},
    "use": {"using", "use", "uses", "used", "with", "via", "leveraging", "leverage", "based", "on", "employ",
            "adopt", "apply", "applied", "from", "of", "to", "for", "in"},
}
AFTER = {"paren": {"("}, "which": {"which", "that", "who"}, "outperform": {"outperforms", "outperform",
                                                                         "achieves", "achieve", "improves"},
         "is": {"is", "are", "consists", "uses", "leverages", "combines", "learns", "enables"}}
_WORD = re.compile(r"[\w.+-]+|\S")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def features(extraction: PaperExtraction) -> np.ndarray:
    """One row per mention of ``extraction``: what :data:`WEIGHTS` scores (see :func:`feature_names`)."""
    text = extraction.paper.abstract
    title_text = (extraction.paper.title or "").lower()
    title = set(_words(title_text))
    sentences = extraction.sentences or [(0, len(text))]
    counts = Counter(m.text.lower() for m in extraction.mentions)
    first_sentence = {}
    for m in extraction.mentions:
        first_sentence.setdefault(m.text.lower(), m.sentence)
    rows = []
    for m in extraction.mentions:
        s_start, s_end = sentences[min(m.sentence, len(sentences) - 1)]
        before, after = _words(text[s_start:m.start])[-6:], _words(text[m.end:s_end])[:3]
        sentence_words = set(_words(text[s_start:s_end]))
        name = m.text
        row = [1.0]
        row += [float(m.role == r) for r in ROLES]
        row += [float(m.label == label) for label in ENTITY_TYPES]
        row += [float(m.rule == rule) for rule in RULES]
        row += [float(bool(BEFORE[k] & set(before))) for k in BEFORE]
        row += [float(bool(AFTER[k] & set(after))) for k in AFTER]
        row += [float("we" in sentence_words), float(bool(BEFORE["propose"] & sentence_words)),
                float(m.confidence), float(m.role_confidence),
                float(bool(m.acronym_of)), float(name.isupper() and len(name) > 1),
                float(any(c.isupper() for c in name[1:])), float(any(c.isdigit() for c in name)),
                float(is_category(name)), min(len(name.split()), 6) / 6,
                m.sentence / max(len(sentences) - 1, 1), float(m.sentence == 0),
                float(m.sentence == len(sentences) - 1), min(counts[name.lower()], 5) / 5,
                float(first_sentence[name.lower()] == m.sentence),
                float(bool(title) and set(_words(name)) <= title),
                len(set(_words(name)) & title) / max(len(set(_words(name))), 1),
                float(bool(title) and title_text.startswith(name.lower()) and title_text[len(name):len(name) + 1] in (":", " ", "")),
                float(bool(m.acronym_of) and bool(title) and set(_words(m.acronym_of)) <= title)]
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(-1, len(feature_names()))


@functools.cache
def feature_names() -> tuple[str, ...]:
    return ("bias", *(f"role={r}" for r in ROLES), *(f"type={label}" for label in ENTITY_TYPES),
            *(f"rule={rule}" for rule in RULES), *(f"before:{k}" for k in BEFORE), *(f"after:{k}" for k in AFTER),
            "sentence has we", "sentence proposes", "confidence", "role confidence", "acronym", "all caps",
            "inner capital", "digit", "generic class", "words", "position", "first sentence", "last sentence",
            "times named", "first naming", "in the title", "share of its words in the title", "opens the title",
            "its long form in the title")


@functools.cache
def model(path: Path = WEIGHTS) -> dict | None:
    """The shipped weights and thresholds, or None where none ship (the rules' roles stand)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    if tuple(found["features"]) != feature_names():
        raise ValueError(f"{path}: its features are not this kg's; retrain it")
    return found


def scores(extraction: PaperExtraction, weights: dict) -> np.ndarray:
    """Each mention's probability of naming the paper's own contribution."""
    if not extraction.mentions:
        return np.zeros(0)
    z = features(extraction) @ np.asarray(weights["coef"], dtype=np.float64)
    return 1 / (1 + np.exp(-z))


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
    for m, p in zip(extraction.mentions, scores(extraction, weights)):
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
