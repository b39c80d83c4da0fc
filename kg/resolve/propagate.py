"""Propagate: find, in every abstract, the names of the entities resolution found in others.

Per-paper rules miss a name when its sentence misleads the tagger ("relative to
flow matching", where "flow" is read as a verb). Once the corpus has named a
thing, its distinctive surface forms (acronyms, names with capitals or digits,
phrases of several words) are looked up in every abstract, and each occurrence
that no mention covers yet becomes a mention of the entity it names (through
the paper's own acronyms, as :func:`kg.resolve.entities.cluster_key` says), where
the mention judge (:mod:`kg.extract.judge`) keeps it as it keeps an extracted
one: one uncertain reading ("vocabulary size optimized for GPU throughput", GPU
a Dataset) is not put into every abstract that names the word. The paper's role
for it is read from the words just before it ("relative to X", "than X" ->
comparesWith) or else from its type.

It is the last step of resolution. It reads each abstract as the extraction
tokenized it (``PaperExtraction.tokens``): the text is neither cleaned nor
parsed again, and mentions are added to the entities already resolved rather
than resolved again.
"""
from __future__ import annotations

import functools
from dataclasses import replace

from ..extract.features import probabilities
from ..extract.judge import model as judge_weights
from ..keys import is_acronym_like
from ..model import Entity, Mention, PaperExtraction
from .entities import cluster_key, corpus_names
from ..vocab import ACTOR_TYPES, DEFAULT_ROLE

EXTRACTOR = "gazetteer-1"
CONFIDENCE = 0.55
_COMPARE_CUES = {"than", "outperform", "outperforms", "outperforming", "surpass", "surpasses", "beats", "versus",
                 "vs", "vs.", "baseline", "baselines", "relative", "compared", "against", "over"}


def _distinctive(form: str) -> bool:
    # One lower-case word ("attention") would be found everywhere and mean little.
    return (is_acronym_like(form) and len(form) >= 2) or len(form.split()) >= 2


def propagate(extractions: list[PaperExtraction], entities: list[Entity], *,
              names: dict[str, str] | None = None) -> tuple[list[PaperExtraction], list[Entity]]:
    """New ``extractions`` with a mention added wherever an entity's distinctive name occurs
    uncovered, and new ``entities`` with those mentions; neither input is changed. ``names`` is
    what :func:`kg.resolve.corpus_names` gives for ``extractions``, where the caller has it.

    Example
    -------
    Two hand-made extractions, their tokens split at spaces; the parse of the second missed the name:

    >>> from kg.model import Paper
    >>> from kg.resolve import resolve
    >>> def extraction(paper_id, text, found):
    ...     words = [word + " " for word in text.split(" ")]
    ...     words[-1] = words[-1].rstrip()
    ...     spans, at = [], 0
    ...     for word in words:
    ...         spans, at = spans + [at, at + len(word.rstrip())], at + len(word)
    ...     tokens, token_spans = PaperExtraction.pack_tokens(words, spans)
    ...     mentions = [Mention(text.index(f), text.index(f) + len(f), f, "Method", 0, 0.8, "rules",
    ...                         role="uses", role_confidence=0.8) for f in found]
    ...     return PaperExtraction(Paper(paper_id, text), [(0, len(text))], mentions, {},
    ...                            tokens=tokens, token_spans=token_spans)
    >>> known = extraction("a", "We build on flow matching .", ["flow matching"])
    >>> missed = extraction("b", "CurlFlow is compared relative to Flow Matching .", [])
    >>> extractions, entities = propagate([known, missed], resolve([known, missed]))
    >>> [(m.text, m.start, m.end, m.role) for m in extractions[1].mentions]
    [('Flow Matching', 33, 46, 'comparesWith')]
    >>> entities[0].mentions
    [('a', 0), ('b', 0)]
    """
    by_paper = {ex.paper.id: ex for ex in extractions}
    # Decoded where needed, a paper at a time: decoding them all at once would hold every
    # paper's offsets as Python objects.
    tokens = functools.lru_cache(maxsize=1024)(lambda paper_id: by_paper[paper_id].token_list())
    # Each distinctive name as the tokens of a mention that wrote it: acronyms as written, the rest
    # in lower case ("Flow Matching" is "flow matching").
    patterns: dict[tuple[str, ...], str] = {}
    for entity in entities:
        forms = {form for form in (entity.label, *entity.aliases) if _distinctive(form)}
        for paper_id, index in entity.mentions:
            mention = by_paper[paper_id].mentions[index]
            if mention.text in forms:
                forms.discard(mention.text)
                words, spans = tokens(paper_id)
                inside = [w.rstrip() for i, w in enumerate(words) if mention.start <= spans[2 * i] and spans[2 * i + 1] <= mention.end]
                if inside:
                    patterns[_pattern(inside, exact=is_acronym_like(mention.text))] = mention.text
    # Every start of a pattern: a run of words that starts none can grow into none.
    starts = {p[:length] for p in patterns for length in range(1, len(p) + 1)}

    names = corpus_names(extractions) if names is None else names
    by_key = {entity.key: entity for entity in entities}
    added: dict[str, list[tuple[str, int]]] = {}  # entity key -> the mentions it gains
    results = []
    for ex in extractions:
        words, spans = ex.token_list()
        bare = [w.rstrip() for w in words]
        lower = [w.lower() for w in bare]
        found = []
        for i in range(len(bare)):
            for j in range(i + 1, len(bare) + 1):
                as_written, lowered = tuple(bare[i:j]), tuple(lower[i:j])
                if as_written not in starts and lowered not in starts:
                    break
                if as_written in patterns or lowered in patterns:
                    found.append((i, j))
        covered = [(m.start, m.end) for m in ex.mentions]
        mentions, gained = list(ex.mentions), []
        for i, j in _longest_first(found):
            start, end = spans[2 * i], spans[2 * (j - 1) + 1]
            if any(s < end and start < e for s, e in covered):
                continue
            text = "".join(words[i:j - 1]) + bare[j - 1]
            entity = by_key.get(cluster_key(text, ex, names))
            if entity is None:  # a name that, in this paper, stands for something generic
                continue
            label = entity.type
            sentence = next((k for k, (s, e) in enumerate(ex.sentences) if s <= start < e), len(ex.sentences) - 1)
            before = set(lower[max(0, i - 4):i])
            role = "comparesWith" if label in ACTOR_TYPES and before & _COMPARE_CUES else DEFAULT_ROLE[label]
            mentions.append(Mention(start, end, text, label, max(sentence, 0), CONFIDENCE, EXTRACTOR,
                                    role=role, role_confidence=CONFIDENCE))
            gained.append(entity.key)
            covered.append((start, end))
        grown = replace(ex, mentions=mentions)
        if gained:  # a name found is kept where the judge of every extracted mention keeps it
            first = len(ex.mentions)
            keep = _kept_by_judge(grown)
            kept = [n for n in range(first, len(mentions)) if keep[n]]
            grown.mentions = mentions[:first] + [mentions[n] for n in kept]
            for position, n in enumerate(kept, first):
                added.setdefault(gained[n - first], []).append((ex.paper.id, position))
        results.append(grown)
    return results, [replace(e, mentions=e.mentions + added[e.key]) if e.key in added else e for e in entities]


def _kept_by_judge(extraction: PaperExtraction) -> list[bool]:
    """For each mention of ``extraction``, whether the mention judge (:mod:`kg.extract.judge`) keeps it."""
    weights = judge_weights()
    if weights is None:
        return [True] * len(extraction.mentions)
    return [bool(p >= weights["keep"]) for p in probabilities(extraction, weights)]


def _pattern(words: list[str], *, exact: bool) -> tuple[str, ...]:
    return tuple(words) if exact else tuple(word.lower() for word in words)


def _longest_first(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Token spans without overlaps, the longest (then the first) kept, in text order, as
    spaCy's ``filter_spans`` chooses them.

    >>> _longest_first([(0, 2), (1, 4), (4, 5)])
    [(1, 4), (4, 5)]
    """
    kept, taken = [], set()
    for start, end in sorted(spans, key=lambda span: (span[1] - span[0], -span[0]), reverse=True):
        if start not in taken and end - 1 not in taken:
            kept.append((start, end))
            taken.update(range(start, end))
    return sorted(kept)
