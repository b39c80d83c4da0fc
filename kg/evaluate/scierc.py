"""Read SciERC, rebuild its text, and score any extractor on it by exact span and type.

SciERC (Luan et al. 2018) is 500 AI abstracts with scientific entities of six
types. Its processed JSON gives PTB tokens (``-LRB-`` for "("), sentences, and
gold spans as *document-level, inclusive* token offsets. Extractors read
plain text, so ``detokenize`` rebuilds the text with the character offsets of
every token, and ``evaluate`` compares an extractor's character spans with the
gold spans on that text: a prediction counts only if its start, end and label
are all exactly those of a gold span.

References
----------
Yi Luan, Luheng He, Mari Ostendorf, Hannaneh Hajishirzi. 2018. Multi-Task
Identification of Entities, Relations, and Coreference for Scientific Knowledge
Graph Construction. EMNLP 2018, 3219-3232.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..vocab import KG_TO_SCIERC, SCIERC_RELATIONS, SCIERC_SYMMETRIC, SCIERC_TO_KG, SCIERC_TYPES

#: The entity types SciERC annotates.
SCIERC_LABELS = SCIERC_TYPES
#: The SciERC types that have a counterpart among kg's types (Material = kg's Dataset).
KG_LABELS = tuple(label for label in SCIERC_TYPES if label in SCIERC_TO_KG)

# PTB escapes back to the characters they stand for.
_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}",
        "``": '"', "''": '"', "`": "'"}
# Tokens (as written in SciERC) glued to the token before them, and after them.
_NO_SPACE_BEFORE = {",", ".", ";", ":", "!", "?", "%", "-RRB-", "-RSB-", "-RCB-", ")", "]", "}",
                    "''", "'", "'s", "'S", "n't", "'re", "'ve", "'ll", "'d", "'m", "..."}
_NO_SPACE_AFTER = {"-LRB-", "-LSB-", "-LCB-", "(", "[", "{", "``", "`", "$"}

Span = tuple[int, int, str]
#: A relation: head (start, end), tail (start, end) and type.
RelationSpan = tuple[int, int, int, int, str]

#: SciERC's relation types. COMPARE and CONJUNCTION are symmetric.
SYMMETRIC = SCIERC_SYMMETRIC


def joined_by_punctuation(before: str, previous: str, word: str) -> bool:
    """Whether ``word`` is written against ``previous`` with no space: it closes or ``previous`` opens."""
    return word in _NO_SPACE_BEFORE or previous in _NO_SPACE_AFTER


def detokenize(words: Sequence[str], joined: Callable[[str, str, str], bool] = joined_by_punctuation
               ) -> tuple[str, list[tuple[int, int]]]:
    """Text of PTB-tokenized ``words`` and each word's ``(start, end)`` character offsets in it.

    PTB escapes become their characters (``-LRB-`` "(", ``-RSB-`` "]",
    ````` and ``''`` a double quote); punctuation that closes (",", ")",
    "'s", "%") sticks to the word before, punctuation that opens ("(", "``")
    to the word after; every other pair of words gets one space. ``joined(before, previous, word)``
    may tell otherwise (SciER glues split digits and hyphens: :func:`.scier.glue`).

    Examples
    --------
    >>> text, offsets = detokenize(["Conditional", "random", "fields", "-LRB-", "CRFs", "-RRB-", "work", "."])
    >>> text
    'Conditional random fields (CRFs) work.'
    >>> offsets[4], text[slice(*offsets[4])]
    ((27, 31), 'CRFs')
    >>> detokenize(["the", "``", "best", "''", "model", "'s", "score"])[0]
    'the "best" model\\'s score'
    """
    parts: list[str] = []
    offsets: list[tuple[int, int]] = []
    position = 0
    before, previous = "", None
    for word in words:
        if previous is not None and not joined(before, previous, word):
            parts.append(" ")
            position += 1
        surface = _PTB.get(word, word)
        parts.append(surface)
        offsets.append((position, position + len(surface)))
        position += len(surface)
        before, previous = previous or "", word
    return "".join(parts), offsets


@dataclass(frozen=True)
class SciercDoc:
    """One SciERC abstract: its tokens, sentences, gold spans, and rebuilt text.

    ``sentences`` are ``(start, end)`` token ranges and ``spans`` are
    ``(start, end, label)`` token ranges, both end-exclusive and counted over
    the whole document; ``offsets[i]`` is token ``i``'s ``(start, end)`` in
    ``text``.
    """

    doc_key: str
    words: tuple[str, ...]
    sentences: tuple[tuple[int, int], ...]
    spans: tuple[Span, ...]
    text: str
    offsets: tuple[tuple[int, int], ...]
    relations: tuple[RelationSpan, ...] = ()

    def char_spans(self) -> list[Span]:
        """The gold spans as ``(start_char, end_char, label)`` in ``text``.

        Examples
        --------
        >>> doc = SciercDoc.from_json({"doc_key": "d", "sentences": [["We", "use", "CRFs", "."]],
        ...                            "ner": [[[2, 2, "Method"]]]})
        >>> doc.char_spans()
        [(7, 11, 'Method')]
        """
        return [(self.offsets[start][0], self.offsets[end - 1][1], label) for start, end, label in self.spans]

    def char_relations(self) -> list[RelationSpan]:
        """The gold relations with both spans as character offsets in ``text``.

        >>> doc = SciercDoc.from_json({"doc_key": "d", "sentences": [["CRFs", "for", "parsing", "."]],
        ...     "ner": [[[0, 0, "Method"], [2, 2, "Task"]]], "relations": [[[0, 0, 2, 2, "USED-FOR"]]]})
        >>> doc.char_relations()
        [(0, 4, 9, 16, 'USED-FOR')]
        """
        return [(self.offsets[hs][0], self.offsets[he - 1][1], self.offsets[ts][0], self.offsets[te - 1][1], label)
                for hs, he, ts, te, label in self.relations]

    @classmethod
    def from_json(cls, record: Mapping) -> SciercDoc:
        """A document from one parsed line of SciERC JSON (raises ``ValueError`` if malformed)."""
        try:
            doc_key = str(record["doc_key"])
            sentences = record["sentences"]
            ner = record.get("ner") or [[] for _ in sentences]
        except (KeyError, TypeError) as error:
            raise ValueError(f"missing field {error}: a SciERC record has doc_key, sentences and ner") from None
        if len(ner) != len(sentences):
            raise ValueError(f"{doc_key}: {len(sentences)} sentences but {len(ner)} ner lists; expected one per sentence")
        words: list[str] = []
        bounds = []
        for sentence in sentences:
            bounds.append((len(words), len(words) + len(sentence)))
            words.extend(str(w) for w in sentence)
        spans = []
        for sentence_spans in ner:
            for start, last, label in sentence_spans:
                if not 0 <= start <= last < len(words):
                    raise ValueError(f"{doc_key}: span [{start}, {last}, {label}] outside the document's "
                                     f"{len(words)} tokens (offsets are document-level and inclusive)")
                spans.append((int(start), int(last) + 1, str(label)))
        relations = []
        for sentence_relations in record.get("relations") or ():
            for hs, he, ts, te, label in sentence_relations:
                if not all(0 <= i < len(words) for i in (hs, he, ts, te)):
                    raise ValueError(f"{doc_key}: relation {[hs, he, ts, te, label]} outside the document's "
                                     f"{len(words)} tokens")
                relations.append((int(hs), int(he) + 1, int(ts), int(te) + 1, str(label)))
        text, offsets = detokenize(words)
        return cls(doc_key, tuple(words), tuple(bounds), tuple(spans), text, tuple(offsets), tuple(relations))


#: The name the issue uses for a SciERC document.
ScierDoc = SciercDoc


def read_scierc(path: str | Path) -> list[SciercDoc]:
    """Read a SciERC JSON Lines file (one abstract per line).

    Parameters
    ----------
    path : str or Path
        A SciERC file such as ``dev.json``.

    Returns
    -------
    list of SciercDoc
        Gold spans are converted to end-exclusive token offsets.

    Raises
    ------
    InputError
        If a line is not JSON or not a SciERC record, naming ``file:line``.

    Examples
    --------
    >>> import tempfile, os
    >>> line = '{"doc_key": "d1", "sentences": [["We", "study", "parsing", "."]], "ner": [[[2, 2, "Task"]]]}'
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write(line + "\\n")
    >>> [doc] = read_scierc(f.name); os.unlink(f.name)
    >>> doc.text, doc.spans, doc.sentences
    ('We study parsing.', ((2, 3, 'Task'),), ((0, 4),))
    """
    docs = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                docs.append(SciercDoc.from_json(json.loads(line)))
            except json.JSONDecodeError as error:
                raise InputError(str(path), number, f"not JSON ({error.msg}); SciERC has one JSON object per line") from None
            except ValueError as error:
                raise InputError(str(path), number, str(error)) from None
    return docs


@dataclass(frozen=True)
class PRF:
    """Counts of true positives, false positives and false negatives, with P, R and F1."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def support(self) -> int:
        """Number of gold spans."""
        return self.tp + self.fn

    @property
    def predicted(self) -> int:
        return self.tp + self.fp

    def __add__(self, other: PRF) -> PRF:
        return PRF(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)


@dataclass(frozen=True)
class Scores:
    """Per-label counts; micro averages over any subset of the labels."""

    per_label: dict[str, PRF]

    def micro(self, labels: Iterable[str] | None = None) -> PRF:
        """Counts summed over ``labels`` (default: all scored labels)."""
        return sum((self.per_label[label] for label in (labels or self.per_label)), PRF())

    def table(self, groups: Mapping[str, Iterable[str]] | None = None) -> str:
        """A plain-text table: one row per label, then one micro row per group of labels.

        ``groups`` defaults to "micro (6 labels)" over every label and, when all
        four are scored, "micro (4: kg types)" over ``KG_LABELS``.
        """
        if groups is None:
            groups = {f"micro ({len(self.per_label)} labels)": list(self.per_label)}
            if set(KG_LABELS) <= set(self.per_label) and len(self.per_label) > len(KG_LABELS):
                groups[f"micro ({len(KG_LABELS)}: {' '.join(KG_LABELS)})"] = KG_LABELS
        width = max(len(name) for name in [*self.per_label, *groups, "label"])
        rows = [f"{'label':<{width}}  {'P':>6} {'R':>6} {'F1':>6} {'support':>8} {'predicted':>9}"]

        def row(name: str, prf: PRF) -> str:
            return (f"{name:<{width}}  {prf.precision:6.3f} {prf.recall:6.3f} {prf.f1:6.3f} "
                    f"{prf.support:8d} {prf.predicted:9d}")

        rows += [row(label, prf) for label, prf in self.per_label.items()]
        rows.append("-" * len(rows[0]))
        rows += [row(name, self.micro(labels)) for name, labels in groups.items()]
        return "\n".join(rows)


def side_by_side(columns: Mapping[str, Scores], groups: Mapping[str, Iterable[str]] | None = None) -> str:
    """One table of several extractors' scores: a row per label and per micro group, P/R/F1 per extractor.

    >>> a = Scores({"Task": PRF(1, 1, 0), "Method": PRF(0, 0, 2)})
    >>> b = Scores({"Task": PRF(1, 0, 0), "Method": PRF(2, 0, 0)})
    >>> print(side_by_side({"old": a, "new": b}, {"micro": ["Task", "Method"]}))
                                     old                  new
    label   support      P      R     F1      P      R     F1
    Task          1  0.500  1.000  0.667  1.000  1.000  1.000
    Method        2  0.000  0.000  0.000  1.000  1.000  1.000
    ---------------------------------------------------------
    micro         3  0.500  0.333  0.400  1.000  1.000  1.000
    """
    first = next(iter(columns.values()))
    groups = groups or {f"micro ({len(first.per_label)})": list(first.per_label)}
    width = max(len(name) for name in [*first.per_label, *groups, "label"])
    block = 3 * 7
    header = " " * (width + 9) + "".join(f"{name:>{block}}" for name in columns)
    rows = [header.rstrip(), f"{'label':<{width}}  {'support':>7}" + "      P      R     F1" * len(columns)]

    def row(name: str, labels: Iterable[str]) -> str:
        labels = list(labels)
        cells = "".join(f" {prf.precision:6.3f} {prf.recall:6.3f} {prf.f1:6.3f}"
                        for prf in (scores.micro(labels) for scores in columns.values()))
        return f"{name:<{width}}  {first.micro(labels).support:7d}{cells}"

    rows += [row(label, [label]) for label in first.per_label]
    rows.append("-" * len(rows[1]))
    rows += [row(name, labels) for name, labels in groups.items()]
    return "\n".join(rows)


def score(gold: Sequence[Iterable[Span]], predicted: Sequence[Iterable[Span]], *,
          labels: Sequence[str] = SCIERC_LABELS) -> Scores:
    """Exact-match precision, recall and F1 per label, for spans grouped by document.

    A predicted span is correct only if a gold span of the same document has
    the same start, end and label. Spans whose label is not in ``labels`` are
    ignored on both sides; repeated spans count once. Nested gold spans are
    scored as any other: an extractor that finds only the outer one misses the
    inner one.

    Parameters
    ----------
    gold, predicted : sequence of iterables of (start, end, label)
        One iterable per document, in the same order; offsets may be tokens or
        characters, as long as both sides use the same.
    labels : sequence of str
        The labels scored, in the order of the table.

    Returns
    -------
    Scores
        ``per_label[label]`` counts; ``micro(labels)`` sums them.

    Raises
    ------
    ValueError
        If ``gold`` and ``predicted`` hold different numbers of documents.

    Examples
    --------
    >>> gold = [[(0, 2, "Task"), (5, 6, "Method")]]
    >>> s = score(gold, [[(0, 2, "Task"), (5, 6, "Task")]], labels=["Task", "Method"])
    >>> s.per_label["Task"], s.per_label["Method"]
    (PRF(tp=1, fp=1, fn=0), PRF(tp=0, fp=0, fn=1))
    >>> round(s.micro().f1, 3)
    0.5
    """
    if len(gold) != len(predicted):
        raise ValueError(f"gold has {len(gold)} documents but predicted has {len(predicted)}; expected one list per document")
    counts = {label: [0, 0, 0] for label in labels}
    for gold_spans, predicted_spans in zip(gold, predicted):
        gold_set = {tuple(s) for s in gold_spans if s[2] in counts}
        predicted_set = {tuple(s) for s in predicted_spans if s[2] in counts}
        for span in predicted_set:
            counts[span[2]][0 if span in gold_set else 1] += 1
        for span in gold_set - predicted_set:
            counts[span[2]][2] += 1
    return Scores({label: PRF(*c) for label, c in counts.items()})


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without surrounding whitespace: extractors differ on whether a span keeps it."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def entity_predictor(nlp) -> Callable[[str], list[Span]]:
    """A ``predict`` for ``evaluate`` from a spaCy pipeline: the character spans of its ``doc.ents``.

    Examples
    --------
    >>> import spacy
    >>> nlp = spacy.blank("en")
    >>> ruler = nlp.add_pipe("entity_ruler")
    >>> ruler.add_patterns([{"label": "Method", "pattern": "CRFs"}])
    >>> entity_predictor(nlp)("We use CRFs.")
    [(7, 11, 'Method')]
    """
    return lambda text: [(e.start_char, e.end_char, e.label_) for e in nlp(text).ents]


def evaluate(docs: Sequence[SciercDoc], predict: Callable[[str], Iterable[Span]], *,
             labels: Sequence[str] = SCIERC_LABELS, label_map: Mapping[str, str] | None = None) -> Scores:
    """Score an extractor on SciERC documents by exact character span and label.

    Parameters
    ----------
    docs : sequence of SciercDoc
        As read by ``read_scierc``.
    predict : callable
        ``predict(text) -> [(start_char, end_char, label), ...]`` on a document's
        rebuilt ``text``: the learned NER alone, kg's whole extractor, anything.
    labels : sequence of str
        The labels scored (default: SciERC's six).
    label_map : mapping, optional
        Renames predicted labels before scoring, e.g. ``KG_TO_SCIERC`` for an
        extractor that speaks kg's types (Dataset -> Material).

    Returns
    -------
    Scores
        ``micro()`` over ``labels``; ``micro(KG_LABELS)`` over the four kg types.

    Examples
    --------
    >>> doc = SciercDoc.from_json({"doc_key": "d", "sentences": [["We", "use", "CRFs", "for", "parsing", "."]],
    ...                            "ner": [[[2, 2, "Method"], [4, 4, "Task"]]]})
    >>> def predict(text):  # finds "CRFs" and calls it a kg Model
    ...     start = text.index("CRFs")
    ...     return [(start, start + 4, "Model")]
    >>> s = evaluate([doc], predict, label_map=KG_TO_SCIERC)
    >>> s.per_label["Method"], s.per_label["Task"]
    (PRF(tp=1, fp=0, fn=0), PRF(tp=0, fp=0, fn=1))
    """
    label_map = label_map or {}
    gold, predicted = [], []
    for doc in docs:
        gold.append(doc.char_spans())
        predicted.append([(*_trim(doc.text, start, end), label_map.get(label, label))
                          for start, end, label in predict(doc.text)])
    return score(gold, predicted, labels=labels)


def _canonical(relation: RelationSpan) -> RelationSpan:
    hs, he, ts, te, label = relation
    if label in SYMMETRIC and (ts, te) < (hs, he):
        return (ts, te, hs, he, label)
    return relation


def evaluate_relations(docs: Sequence[SciercDoc], predict: Callable[[SciercDoc], Iterable[RelationSpan]], *,
                       labels: Sequence[str] = SCIERC_RELATIONS) -> Scores:
    """Score a relation extractor on SciERC by exact boundaries of both arguments and type.

    ``predict(doc)`` returns ``(head_start, head_end, tail_start, tail_end, type)``
    character spans on ``doc.text`` (it may read ``doc``'s gold entities, to
    score relation classification alone). COMPARE and CONJUNCTION match in
    either direction; a relation counts once however often it is predicted.

    Examples
    --------
    >>> doc = SciercDoc.from_json({"doc_key": "d", "sentences": [["CRFs", "and", "HMMs", "for", "parsing", "."]],
    ...     "ner": [[[0, 0, "Method"], [2, 2, "Method"], [4, 4, "Task"]]],
    ...     "relations": [[[0, 0, 4, 4, "USED-FOR"], [0, 0, 2, 2, "CONJUNCTION"]]]})
    >>> s = evaluate_relations([doc], lambda d: [(0, 4, 18, 25, "USED-FOR"), (9, 13, 0, 4, "COMPARE")])
    >>> s.per_label["USED-FOR"], s.per_label["COMPARE"], s.per_label["CONJUNCTION"]
    (PRF(tp=1, fp=0, fn=0), PRF(tp=0, fp=1, fn=0), PRF(tp=0, fp=0, fn=1))
    """
    counts = {label: [0, 0, 0] for label in labels}
    for doc in docs:
        gold = {_canonical(r) for r in doc.char_relations() if r[4] in counts}
        predicted = set()
        for hs, he, ts, te, label in predict(doc):
            if label in counts:
                predicted.add(_canonical((*_trim(doc.text, hs, he), *_trim(doc.text, ts, te), label)))
        for relation in predicted:
            counts[relation[4]][0 if relation in gold else 1] += 1
        for relation in gold - predicted:
            counts[relation[4]][2] += 1
    return Scores({label: PRF(*c) for label, c in counts.items()})
