"""Definitions: what a paper says an entity is, read from the words right after one of its mentions.

Three ways a sentence defines a name, in the order a definition is preferred:

1. a copula at the start of a sentence: "Generative adversarial networks (GANs) are a class of
   generative models that ..." gives "a class of generative models that ...";
2. an appositive: "We propose zoneout, a novel method for regularizing RNNs." gives "a novel
   method for regularizing RNNs";
3. the long form an acronym is defined by, where no sentence defines the name otherwise: "GAN"
   defined in "generative adversarial networks (GANs)" gives "generative adversarial networks".

Each definition keeps its paper and sentence, and only mentions that are evidence of an edge are
read, so the sentence is in the export. Of an entity's definitions, one that names a kind of thing
(:func:`informative`) comes first, then the first by the order above, then by paper id and offset:
it is the entity's ``skos:definition``. The patterns are anchored and bounded (at most
:data:`MAX_CHARS` characters are looked at after a mention), so each mention costs a constant.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..model import Entity, PaperExtraction

MAX_CHARS = 300  # of the text after a mention, the most a definition is read from
MIN_WORDS, MAX_WORDS = 3, 30
_ACRONYM = r"(?:\s*\([^()]{1,24}\))?"  # "(GANs)" between the name and what it is
_COPULA = re.compile(r"(?:s\b)?" + _ACRONYM + r"\s+(?:is|are)\s+((?:an?|one)\s(?:[^;:.]|\.(?=\d))+)", re.I)
# "X, a Y that ..." up to the next comma; "the" is left out: "CNNs, the LSTM and the GRU" is a list.
_APPOSITIVE = re.compile(r"(?:s\b)?" + _ACRONYM + r"\s*,\s+((?:an?)\s(?:[^,;:.()]|[,.](?=\d))+)", re.I)
_LIST_GOES_ON = re.compile(r"\s*,\s*(?:and|or)\s", re.I)  # "convolutional layers, an attention mechanism, and ..."
# A finite verb not in a relative clause: "(MMD), an explicit matching of moments has not been considered"
# is no appositive. "a method that has ..." is one.
_FINITE = re.compile(r"(?<!\bthat )(?<!\bwhich )(?<!\bwho )\b(?:is|are|was|were|has|have|had|can|could|will|would|does|did)\b", re.I)
# Where a copula's description ends: at a clause of its own ("..., but the dependence ...").
_CLAUSE = re.compile(r",\s*(?:but|and|while|whereas|yet|so|however|although|though|since|because|as)\b|\s(?:but|because)\s", re.I)
#: Words that say what kind of thing a name is: a definition with one says more than "a powerful tool".
_CATEGORY = re.compile(r"\b(?:model|method|network|architecture|algorithm|dataset|benchmark|corpus|task|problem|"
                       r"framework|technique|approach|family|class|type|kind|variant|extension|generali[sz]ation|"
                       r"collection|measure|metric|procedure|layer|unit|function|estimator|objective|loss|"
                       r"regulari[sz]er|optimi[sz]er|scheme|mechanism|module|system|process)s?\b", re.I)
_PRAISE = re.compile(r"(?:an?|one of the(?: most)?)\s+(?:very\s+)?(?:powerful|popular|important|promising|useful|"
                     r"effective|well-known|key|fundamental|challenging|common|standard|widely[- ]used|simple|"
                     r"successful|efficient|crucial|essential|major|critical|natural|core)\b", re.I)
_DETERMINER_ONLY = re.compile(r"\s*(?:(?:the|a|an|in particular|recently|here)\s*,?\s*)?", re.I)
#: What a definition ranks by: a copula first.
RANK = {"copula": 0, "appositive": 1, "acronym": 2}


def definition_after(before: str, after: str) -> tuple[str, str] | None:
    """``(kind, text)``: what the words ``after`` a mention say it is, given the sentence's words
    ``before`` it; None if they do not define it.

    >>> definition_after("", " (GANs) are a class of generative models that learn by competition.")
    ('copula', 'a class of generative models that learn by competition')
    >>> definition_after("We propose ", ", a novel method for regularizing RNNs.")
    ('appositive', 'a novel method for regularizing RNNs')
    >>> definition_after("The output of ", " is a vector of scores.") is None  # not the sentence's subject
    True
    >>> definition_after("We compare ", ", a RNN, and a GRU.") is None  # a list, not an appositive
    True
    >>> definition_after("We release X", ", a benchmark of 2,400 questions in 3.5 domains.")  # numbers are not commas
    ('appositive', 'a benchmark of 2,400 questions in 3.5 domains')
    """
    after = after[:MAX_CHARS]
    found = None
    if _DETERMINER_ONLY.fullmatch(before):
        match = _COPULA.match(after)
        found = ("copula", match) if match else None
    if found is None:
        match = _APPOSITIVE.match(after)
        if match and not _LIST_GOES_ON.match(after, match.end(1)) and not _FINITE.search(match.group(1)):
            found = ("appositive", match)
    if found is None:
        return None
    kind, match = found
    text = match.group(1)
    cut = _CLAUSE.search(text)
    words = (text[:cut.start()] if cut else text).split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return None
    return kind, " ".join(words).rstrip(" ,")


def informative(text: str) -> int:
    """How much a definition says: 1 for a kind of thing named ("a family of generative models"),
    0 for praise alone ("a powerful tool", "one of the most powerful sequence models": praise
    first, whatever follows, ranks below), where both are found.

    >>> informative("a family of generative models"), informative("a powerful tool for sequences")
    (1, 0)
    """
    return int(not _PRAISE.match(text) and bool(_CATEGORY.search(" ".join(text.split()[:6]))))


_SHORT_FORM = re.compile(r"[A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*")


def _expansion(short: str, long: str | None, sentence: str, label: str) -> tuple[str, str] | None:
    """("acronym", long form) where ``short`` is an acronym whose long form, defined in ``sentence``,
    begins with its letter and is not the entity's own label.

    >>> _expansion("GANs", "generative adversarial networks", "Generative adversarial networks (GANs) ...", "GAN")
    ('acronym', 'generative adversarial networks')
    >>> _expansion("ImageNet", "image generation on ILSVRC2012", "...", "ImageNet") is None
    True
    """
    if not long or not _SHORT_FORM.fullmatch(short) or sum(c.isupper() for c in short) * 2 < len(short.rstrip("s")):
        return None
    if long[0].lower() != short[0].lower() or long.lower() not in sentence.lower():
        return None
    if _singular(long) == _singular(label):  # "neural network" says nothing of "neural networks"
        return None
    return "acronym", " ".join(long.split())


def _singular(name: str) -> str:
    return " ".join(name.lower().replace("-", " ").split()).removesuffix("s")


def find_definitions(extractions: Iterable[PaperExtraction], mention_entity: Mapping[tuple[str, int], Entity]) -> dict[str, dict]:
    """Each entity's definition, by entity key: ``{"text", "kind", "paper", "sentence_index",
    "start", "end"}`` (``start``/``end``: the defining sentence's offsets in the abstract)."""
    best: dict[str, tuple] = {}
    for ex in extractions:
        paper, abstract = ex.paper, ex.paper.abstract
        for index, mention in enumerate(ex.mentions):
            entity = mention_entity.get((paper.id, index))
            if entity is None or not mention.role:
                continue
            start, end = ex.sentences[mention.sentence]
            found = definition_after(abstract[start:mention.start], abstract[mention.end:end])
            if found is None:
                found = _expansion(mention.text, ex.acronyms.get(mention.text), abstract[start:end], entity.label)
                if found is None:
                    continue
            kind, text = found
            rank = (-informative(text), RANK[kind], paper.id, mention.start)
            if entity.key not in best or rank < best[entity.key][0]:
                best[entity.key] = (rank, {"text": text, "kind": kind, "paper": paper.id,
                                           "sentence_index": mention.sentence, "start": start, "end": end})
    return {key: found for key, (_, found) in best.items()}
