"""What the learned layers after extraction read of each mention: one row of numbers per mention.

The proposals scorer (:mod:`.proposals`) and the mention judge (:mod:`.judge`) are logistic models
over these rows: the mention's role by the rules, its type, the rule that found it, its shape, the
words around it in its sentence, where in the abstract it stands, how often the paper names it, and
how the paper's title names it. All are read from the extraction itself (its text, sentences and
mentions), so that cached extractions are scored as new ones are.
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
from ..vocab import ENTITY_TYPES, ROLES

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
    """One row per mention of ``extraction``, the columns of :func:`feature_names`."""
    text = extraction.paper.abstract
    title_text = (extraction.paper.title or "").lower()
    title = set(_words(title_text))
    sentences = extraction.sentences or [(0, len(text))]
    counts = Counter(m.text.lower() for m in extraction.mentions)
    first_sentence = {}
    for m in extraction.mentions:
        first_sentence.setdefault(m.text.lower(), m.sentence)
    # Read once per sentence and per name, however many mentions share them.
    sentence_words = functools.cache(lambda start, end: set(_words(text[start:end])))
    name_words = functools.cache(lambda name: set(_words(name)))
    category = functools.cache(is_category)
    rows = []
    for m in extraction.mentions:
        s_start, s_end = sentences[min(m.sentence, len(sentences) - 1)]
        before, after = _words(text[s_start:m.start])[-6:], _words(text[m.end:s_end])[:3]
        in_sentence = sentence_words(s_start, s_end)
        name = m.text
        words = name_words(name)
        row = [1.0]
        row += [float(m.role == r) for r in ROLES]
        row += [float(m.label == label) for label in ENTITY_TYPES]
        row += [float(m.rule == rule) for rule in RULES]
        row += [float(bool(BEFORE[k] & set(before))) for k in BEFORE]
        row += [float(bool(AFTER[k] & set(after))) for k in AFTER]
        row += [float("we" in in_sentence), float(bool(BEFORE["propose"] & in_sentence)),
                float(m.confidence), float(m.role_confidence),
                float(bool(m.acronym_of)), float(name.isupper() and len(name) > 1),
                float(any(c.isupper() for c in name[1:])), float(any(c.isdigit() for c in name)),
                float(category(name)), min(len(name.split()), 6) / 6,
                m.sentence / max(len(sentences) - 1, 1), float(m.sentence == 0),
                float(m.sentence == len(sentences) - 1), min(counts[name.lower()], 5) / 5,
                float(first_sentence[name.lower()] == m.sentence),
                float(bool(title) and words <= title),
                len(words & title) / max(len(words), 1),
                float(bool(title) and title_text.startswith(name.lower()) and title_text[len(name):len(name) + 1] in (":", " ", "")),
                float(bool(m.acronym_of) and bool(title) and name_words(m.acronym_of) <= title)]
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


def load_weights(path: Path, names: tuple[str, ...] | None = None) -> dict | None:
    """A learned layer's weights (``coef``, one per feature, and its thresholds) as its bench wrote them,
    or None where none ship; ``ValueError`` if they were fitted on other features than ``names``
    (default: a mention's, :func:`feature_names`)."""
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    if tuple(found["features"]) != (names if names is not None else feature_names()):
        raise ValueError(f"{path}: its features are not this kg's; retrain it")
    return found


def probabilities(extraction: PaperExtraction, weights: dict) -> np.ndarray:
    """The logistic model ``weights`` applied to each mention of ``extraction``."""
    if not extraction.mentions:
        return np.zeros(0)
    z = features(extraction) @ np.asarray(weights["coef"], dtype=np.float64)
    return 1 / (1 + np.exp(-z))
