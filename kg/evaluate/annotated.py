"""kg's own annotated abstracts: SciER's scheme on today's papers, with a second layer.

Readers labelled abstracts of NeurIPS 2023 and ICLR 2017/18 in two layers:

1. SciER's: Method, Task and Dataset, and its nine relations, as SciER's guideline draws them;
2. what SciER leaves out and a graph of the field needs: classes of methods and of tasks
   ("diffusion models", "LLM-as-a-judge", "domain generalization") and kg's Metric.

The file (``bench/annotated/readers.jsonl``) holds offsets, not text, since the abstracts are not
kg's to ship: one line per paper, ``{"corpus", "id", "reader", "held_out", "sha1", "entities":
[[start, end, type, layer]], "relations": [[hs, he, type, ts, te]]}``, offsets into the abstract
with its whitespace runs made single spaces, ``sha1`` that text's. :func:`read_annotated` joins
them with the corpora ``kg build`` reads and checks that each text is the one that was labelled.

Each layer-2 type is its own class for the span model (:data:`LAYER2_LABELS`), so that SciER's
layer is still scored alone (``kg eval scier``), while ``kg build`` reads both.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .scierc import SciercDoc

#: A layer-2 type as the span model's class: a class of methods or tasks is not SciER's Method or Task.
LAYER2_LABELS = {"Method": "MethodClass", "Task": "TaskClass", "Metric": "Metric"}


def normalised(text: str) -> str:
    """``text`` with each run of whitespace one space, trimmed: what offsets count in."""
    return " ".join(text.split())


def text_sha1(text: str) -> str:
    return hashlib.sha1(normalised(text).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Annotated:
    """One labelled abstract: the document (labels as the span model's classes), who labelled it,
    and whether it is held out (never trained or tuned on)."""

    doc: SciercDoc
    corpus: str
    reader: int
    held_out: bool


def _tokens(text: str, tokenizer) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...]]:
    doc = tokenizer(text)
    return tuple(t.text for t in doc), tuple((t.idx, t.idx + len(t)) for t in doc)


def to_doc(key: str, text: str, sentences: Sequence[tuple[int, int]], entities: Iterable[Sequence],
           relations: Iterable[Sequence], tokenizer) -> SciercDoc:
    """A :class:`SciercDoc` of ``text`` (already normalised) on ``tokenizer``'s tokens; ``sentences``
    are character ranges, entities ``(start, end, type, layer)`` and relations ``(hs, he, type, ts, te)``
    character offsets. A label whose ends fall inside a token is dropped.

    >>> from kg.extract.pipeline import load_pipeline
    >>> doc = to_doc("d", "We use CNNs. FID is low.", [(0, 12), (13, 24)], [(7, 11, "Method", 1), (13, 16, "Metric", 2)],
    ...              [], load_pipeline(ner=False).tokenizer)
    >>> doc.char_spans(), doc.sentences
    ([(7, 11, 'Method'), (13, 16, 'Metric')], ((0, 4), (4, 8)))
    """
    words, offsets = _tokens(text, tokenizer)
    starts = {s: i for i, (s, _) in enumerate(offsets)}
    ends = {e: i + 1 for i, (_, e) in enumerate(offsets)}
    bounds = []
    for start, end in sentences:
        inside = [i for i, (s, _) in enumerate(offsets) if start <= s < end]
        if inside:
            bounds.append((inside[0], inside[-1] + 1))
    spans, at = set(), {}
    for start, end, label, layer in entities:
        if start in starts and end in ends:
            name = LAYER2_LABELS[label] if layer == 2 else label
            spans.add((starts[start], ends[end], name))
            at[start, end] = (starts[start], ends[end])
    links = {(*at[hs, he], *at[ts, te], label) for hs, he, label, ts, te in relations
             if (hs, he) in at and (ts, te) in at}
    return SciercDoc(key, words, tuple(bounds), tuple(sorted(spans)), text, offsets, tuple(sorted(links)))


def _sentences(text: str, nlp) -> list[tuple[int, int]]:
    return [(s.start_char, s.end_char) for s in nlp(text).sents]


def read_annotated(path: str | Path, sources: Iterable[str | Path], *, held_out: bool | None = None) -> list[Annotated]:
    """The abstracts labelled in ``path`` whose text is in ``sources`` (corpora as ``kg build`` reads
    them), as documents; with ``held_out`` True or False, only that part.

    A line that is not JSON, or whose paper's text is missing or differs from what was labelled,
    is an :class:`~kg.errors.InputError` naming the file and line: a label on other text is wrong.
    """
    from ..extract.pipeline import load_pipeline
    from ..ingest import read_papers

    texts = {}
    for paper in read_papers(list(sources), on_skip=lambda error: None):
        texts.setdefault(paper.id, paper.abstract)
    nlp = load_pipeline(ner=False)
    out = []
    for number, record in _records(path):
        key, part = str(record["id"]), bool(record["held_out"])
        if held_out is not None and part != held_out:
            continue
        if key not in texts:
            raise InputError(str(path), number, f"paper {key} is in none of the corpora given")
        text = normalised(texts[key])
        if text_sha1(text) != record.get("sha1"):
            raise InputError(str(path), number, f"paper {key}: its abstract differs from the one labelled")
        doc = to_doc(key, text, _sentences(text, nlp), record["entities"], record.get("relations", []), nlp.tokenizer)
        out.append(Annotated(doc, str(record.get("corpus", "")), int(record.get("reader", 0)), part))
    return out


def labelled_ids(path: str | Path) -> set[str]:
    """The ids of every abstract labelled in ``path``, held-out part included, without reading their texts."""
    return {str(record["id"]) for _, record in _records(path)}


def _records(path: str | Path):
    """Each line of an annotated file as ``(line number, record)``; a line that is not an annotated
    abstract is an :class:`~kg.errors.InputError` naming the file and line."""
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                str(record["id"]), bool(record["held_out"]), record["entities"]
            except (ValueError, KeyError, TypeError) as error:
                raise InputError(str(path), number, f"not an annotated abstract ({error})") from None
            yield number, record
