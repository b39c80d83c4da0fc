"""Read SciER, glue its split tokens back into printed text, and score extractors on it.

SciER (Zhang et al. 2024) annotates sentences of full-text ML papers with
three entity types, Method, Task and Dataset (a model is a Method; there is
no Metric), and nine relation types between them, each inside one sentence.
It comes in two layouts, both read here into :class:`~.scierc.SciercDoc`, the
document type ``kg eval scierc`` scores:

- **LLM** (``read_scier_llm``): one sentence per line, ``doc_id``,
  ``sentence`` (tokens joined by spaces), ``ner`` as ``[string, type]`` and
  ``rel`` as ``[head string, type, tail string]``. Consecutive lines with one
  ``doc_id`` are one document. An entity string is a run of the sentence's
  tokens; a string that occurs more than once in its sentence is not told
  apart, so it is aligned to **every** occurrence, and a relation joins every
  occurrence of its head with every occurrence of its tail.
- **PLM** (``read_scier_plm``): one document per line, ``sentences`` (token
  lists), ``ner`` per sentence ``[start, end, type]`` and ``relations`` per
  sentence ``[s1, e1, s2, e2, type]``, document-level token indices, end
  inclusive.

SciER's tokens split every digit and hyphen (``CIFAR - 1 0 0``, ``5 0 . 5 3
%``). :func:`glue` writes them back as printed text, with one left-to-right
rule, and every span is then a character span of that text, so an extractor
reads what an abstract looks like and is scored where kg's tokens fall.

The scorer counts entities by exact span and type, and by span alone, per
type; relations strictly: both spans, both entity types and the relation
type. Compare-With and Synonym-Of count in either direction.

References
----------
Qi Zhang, Zhijia Chen, Huitong Pan, Cornelia Caragea, Longin Jan Latecki,
Eduard Dragut. 2024. SciER: An Entity and Relation Extraction Dataset for
Datasets, Methods, and Tasks in Scientific Documents. EMNLP 2024. (Data:
GPL-3.0.)
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from ..errors import InputError
from ..vocab import SCIER_RELATIONS
from .scierc import PRF, SciercDoc, Scores, _trim, detokenize, joined_by_punctuation

#: SciER's entity types.
SCIER_TYPES = ("Method", "Task", "Dataset")
#: The relation types scored in either direction.
SCIER_SYMMETRIC = frozenset({"Compare-With", "Synonym-Of"})

#: A typed relation: head (start, end, type), tail (start, end, type), relation type.
TypedRelation = tuple[int, int, str, int, int, str, str]

_DIGITS = re.compile(r"\d+")
_NUMBER_POINT = re.compile(r"\d+\.(\d+)?")  # "0." and "0.0", which SciER leaves before a split digit


def _glued(before: str, previous: str, word: str) -> bool:
    """Whether ``word`` is written against ``previous`` (``before`` precedes it), with no space: see :func:`glue`."""
    if word == "-" or previous == "-":
        return True
    if word[:1].isdigit() and (previous[-1:].isdigit() and _DIGITS.fullmatch(word) or _NUMBER_POINT.fullmatch(previous)
                               or previous == "." and before[-1:].isdigit()):
        return True
    return joined_by_punctuation(before, previous, word)


def glue(words: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Printed text of SciER's tokens of one sentence and each token's ``(start, end)`` in it.

    Left to right, a token is written against the one before it, with no
    space, when

    - either of them is a hyphen ``-`` (``state - of - the - art``
      -> ``state-of-the-art``, ``CIFAR - 1 0 0`` -> ``CIFAR-100``);
    - it is digits and the one before ends with a digit (``2 0 1 4`` ->
      ``2014``), or it starts with a digit and the one before is a number
      ending in a point (``0. 9`` -> ``0.9``, ``0.0 1`` -> ``0.01``) or a
      point after a digit (``5 0 . 5 3`` -> ``50.53``);
    - it closes (``,`` ``.`` ``%`` ``)`` ``'s``) or the one before opens
      (``(`` ``[``), as in :func:`.scierc.detokenize`.

    Otherwise one space; the rule reads the two tokens before each one, so
    it is one linear pass. A hyphen SciER split from a
    spaced dash is glued too: SciER does not tell them apart.

    >>> glue("CIFAR - 1 0 0 at 5 0 . 5 3 % , state - of - the - art ( Lin , 2 0 1 4 )".split())[0]
    'CIFAR-100 at 50.53%, state-of-the-art (Lin, 2014)'
    >>> text, offsets = glue(["R", "-", "CNN", "runs"])
    >>> text, offsets
    ('R-CNN runs', [(0, 1), (1, 2), (2, 5), (6, 10)])
    """
    return detokenize(words, joined=_glued)


def _document(doc_key: str, sentences: Sequence[Sequence[str]], spans: Iterable[tuple[int, int, str]],
              relations: Iterable[tuple[int, int, int, int, str]]) -> SciercDoc:
    """A document of glued sentences (one space between sentences); spans and relations are token ranges."""
    words: list[str] = []
    bounds, offsets = [], []
    text = ""
    for sentence in sentences:
        sentence_text, sentence_offsets = glue(sentence)
        if text:
            text += " "
        offsets.extend((len(text) + s, len(text) + e) for s, e in sentence_offsets)
        text += sentence_text
        bounds.append((len(words), len(words) + len(sentence)))
        words.extend(sentence)
    return SciercDoc(doc_key, tuple(words), tuple(bounds), tuple(sorted(set(spans))), text, tuple(offsets),
                     tuple(sorted(set(relations))))


def _occurrences(tokens: Sequence[str], phrase: Sequence[str]) -> list[int]:
    """Every start index of ``phrase`` as a run of ``tokens``."""
    n = len(phrase)
    return [i for i in range(len(tokens) - n + 1) if n and list(tokens[i : i + n]) == list(phrase)]


def _llm_sentence(record: Mapping, offset: int) -> tuple[list[str], list, list, int]:
    """A sentence's tokens, spans and relations (document token ranges) and how many strings were not found."""
    tokens = str(record["sentence"]).split()
    spans: set[tuple[int, int, str]] = set()
    where: dict[str, list[tuple[int, int]]] = {}
    typed: dict[tuple[str, str], list[tuple[int, int]]] = {}
    missing = 0
    for string, label in record.get("ner") or ():
        phrase = str(string).split()
        found = [(offset + i, offset + i + len(phrase)) for i in _occurrences(tokens, phrase)]
        missing += not found
        where.setdefault(" ".join(phrase), []).extend(found)
        typed.setdefault((" ".join(phrase), str(label)), []).extend(found)
        spans.update((s, e, str(label)) for s, e in found)
    relations = set()
    plus = record.get("rel_plus") or [None] * len(record.get("rel") or ())
    for (head, label, tail), extra in zip(record.get("rel") or (), plus):
        head, tail = " ".join(str(head).split()), " ".join(str(tail).split())
        heads, tails = where.get(head, []), where.get(tail, [])
        if extra:  # "string:Type": the occurrences of the string with that type
            head_type, tail_type = str(extra[0]).rpartition(":")[2], str(extra[2]).rpartition(":")[2]
            heads, tails = typed.get((head, head_type), heads), typed.get((tail, tail_type), tails)
        missing += not heads or not tails
        relations.update((*h, *t, str(label)) for h in dict.fromkeys(heads) for t in dict.fromkeys(tails) if h != t)
    return tokens, sorted(spans), sorted(relations), missing


def read_scier_llm(path: str | Path) -> list[SciercDoc]:
    """Read a SciER LLM file (one sentence per line); consecutive lines of one ``doc_id`` are one document.

    Entity strings are aligned to every run of tokens that spells them (see
    the module's docstring); a string found nowhere in its sentence is skipped.

    Raises
    ------
    InputError
        If a line is not JSON or lacks ``doc_id`` or ``sentence``, naming ``file:line``.

    >>> import tempfile, os
    >>> line = {"doc_id": "p", "sentence": "We use R - CNN and R - CNN on MS COCO .",
    ...         "ner": [["R - CNN", "Method"], ["MS COCO", "Dataset"]], "rel": [["R - CNN", "Evaluated-With", "MS COCO"]]}
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(json.dumps(line) + "\\n")
    >>> [doc] = read_scier_llm(f.name); os.unlink(f.name)
    >>> doc.text
    'We use R-CNN and R-CNN on MS COCO.'
    >>> doc.char_spans()
    [(7, 12, 'Method'), (17, 22, 'Method'), (26, 33, 'Dataset')]
    >>> doc.char_relations()
    [(7, 12, 26, 33, 'Evaluated-With'), (17, 22, 26, 33, 'Evaluated-With')]
    """
    docs: list[SciercDoc] = []
    current: str | None = None
    sentences: list[list[str]] = []
    spans: list = []
    relations: list = []

    def close():
        if current is not None:
            docs.append(_document(current, sentences, spans, relations))

    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                doc_id = str(record["doc_id"])
                if doc_id != current:
                    close()
                    current, sentences, spans, relations = doc_id, [], [], []
                tokens, sentence_spans, sentence_relations, _ = _llm_sentence(record, sum(map(len, sentences)))
            except json.JSONDecodeError as error:
                raise InputError(str(path), number, f"not JSON ({error.msg}); SciER LLM has one sentence per line") from None
            except (KeyError, TypeError, ValueError) as error:
                raise InputError(str(path), number, f"not a SciER LLM record ({error}): it has doc_id, sentence, "
                                                    "ner and rel") from None
            sentences.append(tokens)
            spans.extend(sentence_spans)
            relations.extend(sentence_relations)
    close()
    return docs


def read_scier_plm(path: str | Path) -> list[SciercDoc]:
    """Read a SciER PLM file (one document per line; token offsets document-level, end inclusive).

    >>> import tempfile, os
    >>> line = {"doc_id": "p", "sentences": [["R", "-", "CNN", "on", "VOC", "."]],
    ...         "ner": [[[0, 2, "Method"], [4, 4, "Dataset"]]], "relations": [[[0, 2, 4, 4, "Evaluated-With"]]]}
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(json.dumps(line) + "\\n")
    >>> [doc] = read_scier_plm(f.name); os.unlink(f.name)
    >>> doc.text, doc.char_spans(), doc.char_relations()
    ('R-CNN on VOC.', [(0, 5, 'Method'), (9, 12, 'Dataset')], [(0, 5, 9, 12, 'Evaluated-With')])
    """
    docs = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                sentences = [[str(w) for w in s] for s in record["sentences"]]
                size = sum(map(len, sentences))
                spans = [(int(s), int(e) + 1, str(label)) for group in record.get("ner") or () for s, e, label in group]
                relations = [(int(a), int(b) + 1, int(c), int(d) + 1, str(label))
                             for group in record.get("relations") or () for a, b, c, d, label in group]
                if any(not 0 <= s < e <= size for s, e, _ in spans) or \
                        any(not (0 <= a < b <= size and 0 <= c < d <= size) for a, b, c, d, _ in relations):
                    raise ValueError(f"a span outside the document's {size} tokens")
                docs.append(_document(str(record["doc_id"]), sentences, spans, relations))
            except json.JSONDecodeError as error:
                raise InputError(str(path), number, f"not JSON ({error.msg}); SciER PLM has one document per line") from None
            except (KeyError, TypeError, ValueError) as error:
                raise InputError(str(path), number, f"not a SciER PLM record ({error}): it has doc_id, sentences, "
                                                    "ner and relations") from None
    return docs


def read_scier(path: str | Path) -> list[SciercDoc]:
    """Read SciER in either layout, told apart by the first record (``sentence``: LLM; ``sentences``: PLM)."""
    with open(path, encoding="utf-8") as lines:
        first = next((line for line in lines if line.strip()), "")
    try:
        llm = "sentence" in json.loads(first)
    except json.JSONDecodeError:
        llm = False  # the PLM reader names the line
    return read_scier_llm(path) if llm else read_scier_plm(path)


def typed_relations(doc: SciercDoc) -> list[TypedRelation]:
    """The gold relations of ``doc`` with both arguments' types, as character spans; an argument with
    several types gives one relation per type."""
    types: dict[tuple[int, int], list[str]] = {}
    for start, end, label in doc.char_spans():
        types.setdefault((start, end), []).append(label)
    return [(hs, he, ht, ts, te, tt, label) for hs, he, ts, te, label in doc.char_relations()
            for ht in types.get((hs, he), ["?"]) for tt in types.get((ts, te), ["?"])]


def score_entities(docs: Sequence[SciercDoc], predicted: Sequence[Iterable[tuple[int, int, str]]], *,
                   labels: Sequence[str] = SCIER_TYPES) -> tuple[Scores, Scores]:
    """Exact span-and-type scores and span-only scores, per type, of character spans predicted per document.

    Predicted spans are trimmed of surrounding whitespace; a label outside
    ``labels`` is ignored. Span only: a gold span found with any type is a
    true positive of its gold type, a missed one a false negative of its
    type, a predicted span that is no gold span a false positive of its
    predicted type (so the micro row is the usual span-only P/R/F1).

    >>> doc = _document("d", [["We", "use", "R", "-", "CNN", "on", "VOC", "."]],
    ...     [(2, 5, "Method"), (6, 7, "Dataset")], [])
    >>> exact, spans = score_entities([doc], [[(7, 12, "Method"), (16, 19, "Task"), (0, 2, "Task")]])
    >>> exact.per_label["Method"], exact.per_label["Dataset"], exact.per_label["Task"]
    (PRF(tp=1, fp=0, fn=0), PRF(tp=0, fp=0, fn=1), PRF(tp=0, fp=2, fn=0))
    >>> spans.per_label["Dataset"], spans.per_label["Task"], round(spans.micro().f1, 3)
    (PRF(tp=1, fp=0, fn=0), PRF(tp=0, fp=1, fn=0), 0.8)
    """
    if len(docs) != len(predicted):
        raise ValueError(f"{len(docs)} documents but {len(predicted)} predictions; expected one list per document")
    exact = {label: [0, 0, 0] for label in labels}
    loose = {label: [0, 0, 0] for label in labels}
    for doc, found in zip(docs, predicted):
        gold = {s for s in doc.char_spans() if s[2] in exact}
        guess = {(*_trim(doc.text, s, e), label) for s, e, label in found if label in exact}
        for span in guess:
            exact[span[2]][0 if span in gold else 1] += 1
        for span in gold - guess:
            exact[span[2]][2] += 1
        gold_spans = {(s, e) for s, e, _ in gold}
        guess_spans = {(s, e) for s, e, _ in guess}
        for s, e, label in gold:
            loose[label][0 if (s, e) in guess_spans else 2] += 1
        for (s, e), label in {(s, e): label for s, e, label in sorted(guess)}.items():
            if (s, e) not in gold_spans:
                loose[label][1] += 1
    # a gold span with two types counts under each; rare in SciER
    return Scores({k: PRF(*v) for k, v in exact.items()}), Scores({k: PRF(*v) for k, v in loose.items()})


def _canonical(relation: TypedRelation, symmetric: frozenset[str]) -> TypedRelation:
    hs, he, ht, ts, te, tt, label = relation
    if label in symmetric and (ts, te) < (hs, he):
        return (ts, te, tt, hs, he, ht, label)
    return relation


def score_relations(docs: Sequence[SciercDoc], predicted: Sequence[Iterable[TypedRelation]], *,
                    labels: Sequence[str] = SCIER_RELATIONS, symmetric: frozenset[str] = SCIER_SYMMETRIC) -> Scores:
    """Strict relation scores per type: a predicted ``(hs, he, head type, ts, te, tail type, type)`` counts
    only if both character spans, both entity types and the relation type are a gold relation's (the
    ``symmetric`` types in either direction); repeats count once.

    >>> doc = _document("d", [["R", "-", "CNN", "on", "VOC", "."]],
    ...     [(0, 3, "Method"), (4, 5, "Dataset")], [(0, 3, 4, 5, "Evaluated-With")])
    >>> s = score_relations([doc], [[(0, 5, "Method", 9, 12, "Dataset", "Evaluated-With"),
    ...                              (0, 5, "Task", 9, 12, "Dataset", "Benchmark-For")]])
    >>> s.per_label["Evaluated-With"], s.per_label["Benchmark-For"]
    (PRF(tp=1, fp=0, fn=0), PRF(tp=0, fp=1, fn=0))
    """
    if len(docs) != len(predicted):
        raise ValueError(f"{len(docs)} documents but {len(predicted)} predictions; expected one list per document")
    counts = {label: [0, 0, 0] for label in labels}
    for doc, found in zip(docs, predicted):
        gold = {_canonical(r, symmetric) for r in typed_relations(doc) if r[6] in counts}
        guess = {_canonical((*_trim(doc.text, hs, he), ht, *_trim(doc.text, ts, te), tt, label), symmetric)
                 for hs, he, ht, ts, te, tt, label in found if label in counts}
        for relation in guess:
            counts[relation[6]][0 if relation in gold else 1] += 1
        for relation in gold - guess:
            counts[relation[6]][2] += 1
    return Scores({k: PRF(*v) for k, v in counts.items()})


def evaluate_scier(docs: Sequence[SciercDoc],
                   predict: Callable[[SciercDoc], tuple[Iterable[tuple[int, int, str]], Iterable[TypedRelation]]], *,
                   labels: Sequence[str] = SCIER_TYPES, relations: Sequence[str] = SCIER_RELATIONS
                   ) -> dict[str, Scores]:
    """``predict(doc)`` -> (entities, typed relations) on ``doc.text``, scored: ``{"exact", "span", "relation"}``."""
    answers = [predict(doc) for doc in docs]
    exact, span = score_entities(docs, [a[0] for a in answers], labels=labels)
    return {"exact": exact, "span": span,
            "relation": score_relations(docs, [a[1] for a in answers], labels=relations)}
