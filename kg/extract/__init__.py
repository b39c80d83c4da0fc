"""Extract: one ``Paper`` in, one ``PaperExtraction`` out.

For each abstract: clean the markup (keeping an offset map), parse the clean
text with spaCy, find candidate mentions (acronym definitions, names, noun
phrases with telling heads, metrics), keep one per span, give each the
role the paper plays towards it, then read the relations between them
(:mod:`.links`) and the results the abstract reports (:mod:`.results`). Offsets are mapped back to the original
abstract, so ``paper.abstract[m.start:m.end]`` is always the mention as written.

The step is pure and per paper, so it can be cached and run in parallel.
"""
from __future__ import annotations

import contextlib
import functools
import multiprocessing
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc

from ..errors import KGError
from ..model import Link, Mention, Paper, PaperExtraction, Result
from ..similarity import pack_contexts
from ..text import clean
from ..vocab import DEFAULT_ROLE, KG_TO_SCIERC, SCIERC_RELATION, SCIERC_TO_KG
from . import classes, roles, rules
from .candidate import Candidate
from .links import find_links
from .pipeline import load_pipeline, version
from .relation_model import load_relation_model, span_model_links, span_model_synonyms
from .results import Found, find_results

#: Bump when the rules change: cached extractions of older versions are redone.
RULES_VERSION = "57"

#: Steps that retype mentions once they are chosen, which ``without`` may leave out by name, as it does a rule.
STEPS = ("method-noun", "one-type-per-name")


def extractor_name(nlp: Language) -> str:
    return f"rules-{RULES_VERSION}+{version(nlp)}"


def find_mentions(doc: Doc, matchers) -> list:
    """Every source's mentions of a parsed abstract, the span model's and each rule's, before
    :func:`kg.extract.rules.select` keeps one per span."""
    return (rules.find_abbreviation_mentions(doc)
            + rules.find_name_mentions(doc)
            + rules.find_lexicon_mentions(doc, matchers["lexicon"])
            + rules.find_ner_mentions(doc)
            + classes.find_class_mentions(doc))


@dataclass
class Finding:
    """What one parsed abstract names and says, in token terms: its mentions with their roles (in
    the order of their spans), the acronyms it defines, the links between its mentions (indices
    into ``mentions``), the pairs the span model calls synonyms, and the results it reports."""

    mentions: list[Candidate]
    acronyms: dict[str, str]
    links: list[Link]
    synonyms: list[tuple[int, int]]
    results: list[Found]


def extract_doc(paper: Paper, doc: Doc, offsets, *, extractor: str, matchers,
                without: frozenset[str] = frozenset()) -> PaperExtraction:
    """The extraction of one parsed abstract: what it names and says (:func:`find`), placed in the
    original text (:func:`place`). ``offsets`` maps clean to original characters; ``without``: see
    :func:`find`."""
    return place(paper, doc, offsets, find(doc, matchers, without=without), extractor=extractor)


def find(doc: Doc, matchers, *, without: frozenset[str] = frozenset()) -> Finding:
    """The mentions of a parsed abstract with their roles, then the links and results between them.
    Mentions found by a rule named in ``without`` ("ner", "task-head", ...) are left out before the
    others are chosen: what evaluation does to measure what each rule brings."""
    mentions = rules.datasets_out_of_metrics(rules.whole_words(rules.with_levels(rules.select(
        [m for m in find_mentions(doc, matchers) if m.rule not in without]))))
    proposed = roles.proposed_tokens(doc)
    taken = {t.i for m in mentions for t in m.span}
    unnamed = [m for m in roles.unnamed_proposals(doc, proposed, taken) if m.rule not in without]
    mentions = sorted(mentions + unnamed, key=lambda m: (m.span.start, m.span.end))
    if "method-noun" not in without:
        rules.methods_by_their_noun(mentions)
    if "one-type-per-name" not in without:
        rules.one_type_per_name(mentions, proposed)

    # Each mention is given its role (and final label) before links and results read them;
    # ``acronyms`` maps each defined short form to its long form.
    acronyms = {}
    for mention in mentions:
        span = mention.span
        nested = any(o is not mention and o.span.start <= span.start and span.end <= o.span.end
                     and len(o.span) > len(span) and o.rule in roles.NAMED_RULES for o in mentions)
        role, confidence = roles.role_of(mention, proposed, nested=nested)
        if mention.rule in classes.RULES and role in ("proposes", "introduces"):
            role = DEFAULT_ROLE[mention.label]  # "we propose a diffusion model": a class is no one's contribution
        mention.role, mention.role_confidence = role, round(confidence, 3)
        if mention.rule == "abbreviation-short":
            acronyms[span.text] = mention.acronym_of
    roles.settle_proposals(mentions)
    roles.name_later_proposals(doc, mentions)  # "a novel model ... The Gated Multimodal Unit (GMU) model"
    for mention in mentions:
        if mention.role == "proposes" and mention.label == "Task":
            mention.label = "Method"  # "TransCoder-based Precise Editing (TCPE)" is a method, not a task

    results = list(find_results(doc, mentions))
    # The model's relations first: on SciER dev they are the more precise where both relate a pair,
    # but a sentence's "A outperforms B" says more than the model's "A is compared with B".
    stated = find_links(doc, mentions)
    wins = {frozenset((link.head, link.tail)) for link in stated if link.relation == "outperforms"}
    links = [link for link in span_model_links(mentions)
             if not (link.relation == "comparedWith" and frozenset((link.head, link.tail)) in wins)]
    related = {frozenset((link.head, link.tail)) for link in links}
    links += [link for link in stated if frozenset((link.head, link.tail)) not in related]
    return Finding(mentions, acronyms, links, span_model_synonyms(mentions), results)


def place(paper: Paper, doc: Doc, offsets, found: Finding, *, extractor: str) -> PaperExtraction:
    """``found`` in the original abstract: each sentence's, mention's, result's and token's offsets
    mapped back through ``offsets``, each mention made a :class:`kg.model.Mention` with its
    sentence. What leaves the stage is plain data: no parse, confidences as stored."""
    sentence_of = {}
    sentences = []
    for index, sent in enumerate(doc.sents):
        start, end = offsets.original_span(sent.start_char, sent.end_char)
        while start < end and paper.abstract[start].isspace():
            start += 1
        while end > start and paper.abstract[end - 1].isspace():
            end -= 1
        sentences.append((start, end))
        for token in sent:
            sentence_of[token.i] = index

    mentions = []
    for c in found.mentions:
        start, end = offsets.original_span(c.span.start_char, c.span.end_char)
        mentions.append(Mention(start=start, end=end, text=c.text, label=c.label, sentence=sentence_of[c.span.start],
                                confidence=round(c.confidence, 3), extractor=extractor, acronym_of=c.acronym_of,
                                role=c.role, role_confidence=c.role_confidence, rule=c.rule))
    results = []
    for r in found.results:
        start, end = offsets.original_span(r.value.start_char, r.value.end_char)
        results.append(Result(start=start, end=end, value=r.number, unit=r.unit, sentence=sentence_of[r.value.start],
                              metric=r.metric, dataset=r.dataset, subject=r.subject, previous=r.previous, kind=r.kind,
                              confidence=r.confidence))
    spans = []
    for token in doc:
        spans += offsets.original_span(token.idx, token.idx + len(token))
    tokens, token_spans = PaperExtraction.pack_tokens([token.text_with_ws for token in doc], spans)
    return PaperExtraction(paper=paper, sentences=sentences, mentions=mentions, acronyms=found.acronyms,
                           links=found.links, results=results, synonyms=found.synonyms, tokens=tokens,
                           token_spans=token_spans, contexts=contexts(doc, found.mentions, mentions))


def contexts(doc: Doc, found: list[Candidate], placed: list[Mention]) -> str:
    """Each mention's words and the rest of its sentence as the span model's encoder read them, packed
    (:func:`kg.similarity.pack_contexts`); empty where no encoder ran."""
    words = doc._.word_vectors if Doc.has_extension("word_vectors") else None
    if words is None or not len(words):
        return ""
    read = np.array([not token.is_space for token in doc])
    spans, around = np.zeros((len(found), words.shape[1]), dtype=np.float32), np.zeros((len(found), words.shape[1]), dtype=np.float32)
    for row, candidate in enumerate(found):
        span, sentence = candidate.span, candidate.span.sent
        inside = read[span.start:span.end]
        if inside.any():
            spans[row] = words[span.start:span.end][inside].mean(axis=0)
        rest = read[sentence.start:sentence.end].copy()
        rest[span.start - sentence.start:span.end - sentence.start] = False
        if rest.any():
            around[row] = words[sentence.start:sentence.end][rest].mean(axis=0)
    return pack_contexts([(m.start, m.end) for m in placed], spans, around)


def extract_papers(papers: Iterable[Paper], *, nlp: Language | None = None, batch_size: int = 64,
                   without: frozenset[str] = frozenset()) -> Iterator[PaperExtraction]:
    """Extract every paper, parsing in batches with ``nlp.pipe`` (``without``: see :func:`extract_doc`).

    Example
    -------
    >>> from kg.model import Paper
    >>> [ex] = extract_papers([Paper("p1", "We propose E-GRPO, a novel framework for question answering.")])
    >>> [(m.text, m.label) for m in ex.mentions]
    [('E-GRPO', 'Method'), ('question answering', 'Task')]
    >>> [m.role for m in ex.mentions]
    ['proposes', 'addresses']
    """
    nlp = nlp or load_pipeline()
    extractor = extractor_name(nlp)
    matchers = {"lexicon": rules.lexicon_matchers(nlp)}
    papers = list(papers) if not isinstance(papers, list) else papers
    cleaned = (clean(p.abstract) for p in papers)
    pairs = ((c.text, (p, c)) for p, c in zip(papers, cleaned))
    for doc, (paper, offsets) in nlp.pipe(pairs, as_tuples=True, batch_size=batch_size):
        yield extract_doc(paper, doc, offsets, extractor=extractor, matchers=matchers, without=without)


@dataclass(frozen=True)
class ExtractionFailure:
    """A paper whose extraction raised: the paper and the error, as ``"ExceptionType: message"``."""

    paper: Paper
    error: str


def extract_chunk(papers: list[Paper], encoder_threads: int | None = None) -> list[PaperExtraction | ExtractionFailure]:
    """The extractions of ``papers``, in order; a paper whose extraction raises is an ``ExtractionFailure``.

    What one worker (a process of a pool, a Dask worker) runs on one chunk: the pipeline is loaded
    once per process (:func:`.pipeline.load_pipeline` caches it), with ``encoder_threads``
    threads for the span model (default: every core).

    >>> from kg.model import Paper
    >>> [(type(e).__name__, e.paper.id) for e in extract_chunk([Paper("p1", "We propose GRPO.")])]
    [('PaperExtraction', 'p1')]
    """
    nlp = load_pipeline(encoder_threads=encoder_threads)
    try:
        return list(extract_papers(papers, nlp=nlp))
    except Exception:  # noqa: BLE001 - one paper broke the batch: parse each alone, to keep the others
        return [_extract_one(paper, nlp) for paper in papers]


def _extract_one(paper: Paper, nlp: Language) -> PaperExtraction | ExtractionFailure:
    try:
        [extraction] = extract_papers([paper], nlp=nlp)
        return extraction
    except Exception as error:  # noqa: BLE001 - reported against the paper's file and line, never fatal
        message = " ".join(str(error).split())[:200]
        return ExtractionFailure(paper, f"{type(error).__name__}: {message}" if message else type(error).__name__)


#: ``(position, extractions)`` of every chunk, as they finish, from a generator: one that
#: :func:`extract_all` closes when it stops reading (done, failed or interrupted), so that a pool
#: or a cluster stops working for it.
Batches = Generator[tuple[int, list[PaperExtraction | ExtractionFailure]], None, None]
#: Runs :func:`extract_chunk` on every chunk somewhere: here, in a pool, on a cluster.
Executor = Callable[[list[list[Paper]]], Batches]


def serially(chunks: list[list[Paper]]) -> Batches:
    """The :data:`Executor` that extracts each chunk here, one after the other."""
    yield from enumerate(map(extract_chunk, chunks))


def in_processes(processes: int) -> Executor:
    """The :data:`Executor` that spreads the chunks over a pool of ``processes`` forked processes
    (one chunk, or one process: :func:`serially`)."""
    def run(chunks: list[list[Paper]]) -> Batches:
        if processes < 2 or len(chunks) < 2:
            yield from serially(chunks)
            return
        # One encoder thread per worker: the workers already use every core. Leaving the block
        # (the build done, failed or interrupted) terminates the pool.
        with multiprocessing.get_context("fork").Pool(min(processes, len(chunks))) as pool:
            yield from enumerate(pool.imap(functools.partial(extract_chunk, encoder_threads=1), chunks))

    return run


def extract_all(
    papers: list[Paper],
    *,
    executor: Executor = serially,
    cache=None,
    chunk_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
    on_failure: Callable[[ExtractionFailure], None] | None = None,
) -> list[PaperExtraction]:
    """Extract ``papers`` in order, reusing ``cache`` hits and handing the rest, in chunks of
    ``chunk_size``, to ``executor``: :func:`serially` (the default), :func:`in_processes` or
    :func:`kg.extract.cluster.on_cluster`, as the build chooses.

    ``cache`` is a ``kg.cache.ExtractionCache`` (or None); new extractions are added to it
    as they arrive. ``progress(done, total)`` is called as papers finish. A paper whose
    extraction raises is left out of the result and passed to ``on_failure`` (which may raise
    to stop the build); without ``on_failure`` its error is raised as a ``KGError``.
    """
    results: list[PaperExtraction | None] = [cache.get(p) if cache else None for p in papers]
    todo = [i for i, r in enumerate(results) if r is None]
    done = len(papers) - len(todo)
    if progress and done:
        progress(done, len(papers))
    chunks = [todo[i : i + chunk_size] for i in range(0, len(todo), chunk_size)]
    if not chunks:
        return results  # type: ignore[return-value]
    with contextlib.closing(executor([[papers[i] for i in chunk] for chunk in chunks])) as batches:
        for position, batch in batches:
            for i, extraction in zip(chunks[position], batch):
                results[i] = extraction
            failures = [e for e in batch if isinstance(e, ExtractionFailure)]
            if cache:
                cache.put([e for e in batch if not isinstance(e, ExtractionFailure)])
            for failure in failures:
                if on_failure is None:
                    raise KGError(f"{failure.paper.id}: could not be extracted ({failure.error})")
                on_failure(failure)
            done += len(batch)
            if progress:
                progress(done, len(papers))
    return [r for r in results if not isinstance(r, ExtractionFailure)]  # type: ignore[misc]


@functools.lru_cache(maxsize=256)
def _extract_text(text: str) -> PaperExtraction:
    # Scoring asks for a text's entities and then its relations: extract it once. SciER and SciERC
    # do not annotate classes of methods ("diffusion models"): that layer is left out where they score kg.
    [extraction] = extract_papers([Paper("scierc", text)], without=classes.RULES)
    return extraction


def predict_text(text: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, int, int, str]]]:
    """The span model's (:mod:`.spans`) entities ``(start, end, label)`` and relations ``(head_start,
    head_end, tail_start, tail_end, type)`` in ``text``, as character offsets, on kg's sentences and tokens:
    the model alone, as ``kg eval scierc`` scores it beside kg's whole extractor (:func:`predict_entities`).

    >>> entities, relations = predict_text("We propose a graph-based parser for semantic role labeling.")
    >>> entities
    [(13, 31, 'Method'), (36, 58, 'Task')]
    >>> relations
    [(13, 31, 36, 58, 'Used-For')]
    """
    doc = load_pipeline()(text)
    ents = list(doc.ents)
    entities = [(e.start_char, e.end_char, e.label_) for e in ents]
    relations = [(ents[h].start_char, ents[h].end_char, ents[t].start_char, ents[t].end_char, label)
                 for h, t, label, _ in doc._.relations]
    return entities, relations


def predict_entities(text: str) -> list[tuple[int, int, str]]:
    """The mentions kg finds in ``text``, as (start, end, SciERC label) character spans.

    >>> predict_entities("We propose E-GRPO for question answering on SQuAD.")
    [(11, 17, 'Method'), (22, 40, 'Task'), (44, 49, 'Material')]
    """
    return [(m.start, m.end, KG_TO_SCIERC[m.label]) for m in _extract_text(text).mentions]


def predict_relations(text: str, entities: list[tuple[int, int, str]] | None = None, *,
                      model=None, use_rules: bool = True) -> list[tuple[int, int, int, int, str]]:
    """The relations kg reads in ``text`` as ``(head_start, head_end, tail_start, tail_end, SciERC type)``.

    With ``entities`` (character spans with SciERC labels, e.g. gold ones),
    relations are read between those mentions instead of kg's own: by the
    rules (with ``use_rules``, for the labels kg has) and by the learned ``model``
    (default: the shipped one), which knows all of SciERC's labels and types.

    >>> predict_relations("We propose E-GRPO for question answering.")
    [(11, 17, 22, 40, 'USED-FOR')]
    """
    if entities is None:
        extraction = _extract_text(text)
        spans = [(m.start, m.end) for m in extraction.mentions]
        links = extraction.links
    else:
        doc = load_pipeline(ner=False)(text)
        proposed = roles.proposed_tokens(doc)
        mentions, spans, labels = [], [], []
        for start, end, label in sorted(entities):
            span = doc.char_span(start, end, alignment_mode="expand")
            if span is None or not len(span):
                continue
            gold = Candidate(span, SCIERC_TO_KG.get(label, label), 0.8, "gold")
            gold.role, _ = roles.role_of(gold, proposed)
            mentions.append(gold)
            spans.append((start, end))
            labels.append(label)
        links = find_links(doc, mentions) if use_rules else []
        model = model or load_relation_model()
        learned = model.predict([(m.span, label) for m, label in zip(mentions, labels)]) if model else []
    found = {}
    if entities is not None:
        for head, tail, label, _ in learned:
            found[spans[head], spans[tail]] = label
    for link in links:  # where the model relates a pair, it knows SciERC's conventions better
        if link.relation not in SCIERC_RELATION:
            continue  # benchmarkFor, trainedOn: SciERC has no such relation
        label, swap = SCIERC_RELATION[link.relation]
        head, tail = (link.tail, link.head) if swap else (link.head, link.tail)
        if (spans[head], spans[tail]) not in found and (spans[tail], spans[head]) not in found:
            found[spans[head], spans[tail]] = label
    return [(*head, *tail, label) for (head, tail), label in found.items()]
