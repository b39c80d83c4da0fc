"""Propagate: find, in every abstract, the names that the extraction of other papers found.

Per-paper rules miss a name when its sentence misleads the tagger ("relative to
flow matching", where "flow" is read as a verb). Once the corpus has named a
thing, its distinctive surface forms (acronyms, names with capitals or digits,
phrases of several words) are looked up in every abstract, and each occurrence
that no mention covers yet becomes a mention. The paper's role for it is read
from the words just before it ("relative to X", "than X" -> comparesWith) or
else from its type.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from spacy.matcher import PhraseMatcher
from spacy.util import filter_spans

from .extract.pipeline import load_pipeline
from .model import Entity, Mention, PaperExtraction, Role
from .resolve import is_acronym_like
from .text import clean

EXTRACTOR = "gazetteer-1"
CONFIDENCE = 0.55
_DEFAULT_ROLE = {"Task": "addresses", "Dataset": "evaluatesOn", "Metric": "measures", "Method": "uses", "Model": "uses"}
_COMPARE_CUES = {"than", "outperform", "outperforms", "outperforming", "surpass", "surpasses", "beats", "versus",
                 "vs", "vs.", "baseline", "baselines", "relative", "compared", "against", "over"}


def _distinctive(form: str) -> bool:
    # One lower-case word ("attention") would be found everywhere and mean little.
    return (is_acronym_like(form) and len(form) >= 2) or len(form.split()) >= 2


def propagate(extractions: list[PaperExtraction], entities: list[Entity]) -> list[PaperExtraction]:
    """``extractions`` with a mention added wherever an entity's distinctive name occurs uncovered.

    Example
    -------
    >>> from kg.model import Paper
    >>> from kg.resolve import resolve
    >>> text = "CurlFlow is compared relative to flow matching."
    >>> known = PaperExtraction(Paper("a", "Mirror Flow Matching builds on flow matching."), [(0, 45)],
    ...     [Mention(30, 43, "flow matching", "Method", 0, 0.8, "rules")], [Role(0, "uses", 0.8)], {})
    >>> missed = PaperExtraction(Paper("b", text), [(0, len(text))], [], [], {})
    >>> found = propagate([known, missed], resolve([known, missed]))[1]
    >>> [(m.text, text[m.start:m.end], r.role) for m, r in zip(found.mentions, found.roles)]
    [('flow matching', 'flow matching', 'comparesWith')]
    """
    nlp = load_pipeline()
    case_sensitive = PhraseMatcher(nlp.vocab, attr="ORTH")
    case_free = PhraseMatcher(nlp.vocab, attr="LOWER")
    label_of: dict[str, str] = {}
    by_matcher = defaultdict(list)
    for entity in entities:
        for form in {entity.label, *entity.aliases}:
            if not _distinctive(form):
                continue
            matcher = case_sensitive if is_acronym_like(form) else case_free
            by_matcher[id(matcher)].append(form)
            label_of[form if matcher is case_sensitive else form.lower()] = entity.type
    for matcher in (case_sensitive, case_free):
        forms = by_matcher[id(matcher)]
        if forms:
            matcher.add("NAME", list(nlp.tokenizer.pipe(forms)))

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
            label = label_of.get(span.text) or label_of.get(span.text.lower())
            if label is None:
                continue
            sentence = next((i for i, (s, e) in enumerate(ex.sentences) if s <= start < e), len(ex.sentences) - 1)
            before = {t.lower_ for t in doc[max(0, span.start - 4) : span.start]}
            role = "comparesWith" if label in ("Method", "Model") and before & _COMPARE_CUES else _DEFAULT_ROLE[label]
            mentions.append(Mention(start, end, span.text, label, max(sentence, 0), CONFIDENCE, EXTRACTOR))
            roles.append(Role(len(mentions) - 1, role, CONFIDENCE))
            covered.append((start, end))
        results.append(replace(ex, mentions=mentions, roles=roles))
    return results
