"""Propagate: find, in every abstract, the names of the entities resolution found in others.

Per-paper rules miss a name when its sentence misleads the tagger ("relative to
flow matching", where "flow" is read as a verb). Once the corpus has named a
thing, its distinctive surface forms (acronyms, names with capitals or digits,
phrases of several words) are looked up in every abstract, and each occurrence
that no mention covers yet becomes a mention of the entity it names (through
the paper's own acronyms, as :func:`kg.resolve.cluster_key` says). The
paper's role for it is read from the words just before it ("relative to X",
"than X" -> comparesWith) or else from its type.

It is the last step of resolution: it reads the abstracts with the
extraction's tokenizer, but adds mentions to entities already resolved
rather than resolving again.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from spacy.matcher import PhraseMatcher
from spacy.util import filter_spans

from .extract.pipeline import load_pipeline
from .model import Entity, Mention, PaperExtraction, Role
from .resolve import cluster_key, corpus_meanings, is_acronym_like
from .text import clean

EXTRACTOR = "gazetteer-1"
CONFIDENCE = 0.55
_DEFAULT_ROLE = {"Task": "addresses", "Dataset": "evaluatesOn", "Metric": "measures", "Method": "uses", "Model": "uses"}
_COMPARE_CUES = {"than", "outperform", "outperforms", "outperforming", "surpass", "surpasses", "beats", "versus",
                 "vs", "vs.", "baseline", "baselines", "relative", "compared", "against", "over"}


def _distinctive(form: str) -> bool:
    # One lower-case word ("attention") would be found everywhere and mean little.
    return (is_acronym_like(form) and len(form) >= 2) or len(form.split()) >= 2


def propagate(extractions: list[PaperExtraction], entities: list[Entity]) -> tuple[list[PaperExtraction], list[Entity]]:
    """``extractions`` with a mention added wherever an entity's distinctive name occurs uncovered,
    and ``entities`` with those mentions.

    Example
    -------
    >>> from kg.model import Paper
    >>> from kg.resolve import resolve
    >>> text = "CurlFlow is compared relative to flow matching."
    >>> known = PaperExtraction(Paper("a", "Mirror Flow Matching builds on flow matching."), [(0, 45)],
    ...     [Mention(30, 43, "flow matching", "Method", 0, 0.8, "rules")], [Role(0, "uses", 0.8)], {})
    >>> missed = PaperExtraction(Paper("b", text), [(0, len(text))], [], [], {})
    >>> extractions, entities = propagate([known, missed], resolve([known, missed]))
    >>> [(m.text, text[m.start:m.end], r.role) for m, r in zip(extractions[1].mentions, extractions[1].roles)]
    [('flow matching', 'flow matching', 'comparesWith')]
    >>> entities[0].mentions  # b's new mention, and "Flow Matching" in a's "Mirror Flow Matching"
    [('a', 0), ('a', 1), ('b', 0)]
    """
    nlp = load_pipeline()
    case_sensitive = PhraseMatcher(nlp.vocab, attr="ORTH")
    case_free = PhraseMatcher(nlp.vocab, attr="LOWER")
    by_matcher = defaultdict(list)
    for entity in entities:
        for form in {entity.label, *entity.aliases}:
            if _distinctive(form):
                by_matcher[id(case_sensitive if is_acronym_like(form) else case_free)].append(form)
    for matcher in (case_sensitive, case_free):
        forms = by_matcher[id(matcher)]
        if forms:
            matcher.add("NAME", list(nlp.tokenizer.pipe(forms)))

    by_key = {entity.key: entity for entity in entities}
    meaning = corpus_meanings(extractions)
    results = []
    for ex in extractions:
        cleaned = clean(ex.paper.abstract)
        doc = nlp.tokenizer(cleaned.text)
        spans = filter_spans([doc[s:e] for m in (case_sensitive, case_free) for _, s, e in m(doc)])
        covered = [(m.start, m.end) for m in ex.mentions]
        mentions, roles = list(ex.mentions), list(ex.roles)
        for span in spans:
            start, end = cleaned.original_span(span.start_char, span.end_char)
            if any(s < end and start < e for s, e in covered):
                continue
            entity = by_key.get(cluster_key(span.text, ex, meaning))
            if entity is None:  # a name that, in this paper, stands for something generic
                continue
            label = entity.type
            sentence = next((i for i, (s, e) in enumerate(ex.sentences) if s <= start < e), len(ex.sentences) - 1)
            before = {t.lower_ for t in doc[max(0, span.start - 4) : span.start]}
            role = "comparesWith" if label in ("Method", "Model") and before & _COMPARE_CUES else _DEFAULT_ROLE[label]
            mentions.append(Mention(start, end, span.text, label, max(sentence, 0), CONFIDENCE, EXTRACTOR))
            roles.append(Role(len(mentions) - 1, role, CONFIDENCE))
            entity.mentions.append((ex.paper.id, len(mentions) - 1))
            covered.append((start, end))
        results.append(replace(ex, mentions=mentions, roles=roles))
    return results, entities
