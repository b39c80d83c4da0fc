"""The documents a training run reads, on kg's tokens, and what each chunk of them should predict.

Documents are tokenized by kg's own tokenizer, with their corpus's sentences, and the gold spans
aligned to its tokens, so that the model learns on the words it will see in ``kg build``; a gold
span kg's tokens cannot express is lost (the run counts them).

Two label schemas (the recipe's ``schema``, :data:`kg.train.recipe.SCHEMAS`):

- ``scierc``: SciERC's six entity and seven relation types, trained on SciERC
  (the model shipped first).
- ``kg``: kg's own types. Method, Task and Dataset and SciER's nine relations
  come from SciER (:mod:`kg.evaluate.scier`, its split tokens glued back);
  Metric, which SciER lacks, from SciERC, read beside it. Neither corpus
  annotates everything the other does, so a candidate span's target is the
  *set* of classes its corpus allows (:data:`ALLOWED`): a SciER span that is no
  entity may still be a Metric; a SciERC Material may be a Dataset or nothing
  (SciERC has no Dataset type; its Materials include datasets and much else);
  its OtherScientificTerm and Generic spans may be anything but a Metric, since
  SciERC would have called a metric one; a span SciERC leaves unlabelled is
  nothing. SciERC's relations are another schema and train nothing.
"""
from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..evaluate.scier import read_scier
from ..evaluate.scierc import SciercDoc, read_scierc
from ..extract.spans import Chunk, Labels, SpanModel, candidate_spans, make_chunks
from .recipe import SCHEMAS, SCIERC_DOCS, corpus_of


#: Under the kg schema, the classes a span may take, by corpus and gold label ("" for a span the corpus
#: leaves unlabelled; None is "no entity"). A label absent here allows only itself.
#: A class the model lacks is dropped (the kg schema has no MethodClass): one table serves every schema.
#: kg's annotated abstracts label both layers, so what they leave unlabelled is nothing.
ALLOWED = {
    "scier": {"": {None, "Metric", "MethodClass", "TaskClass"}},
    "scierc": {"": {None}, "Material": {None, "Dataset"}, "Method": {"Method", "MethodClass"},
               "Task": {"Task", "TaskClass"},
               "OtherScientificTerm": {None, "Method", "Task", "Dataset", "MethodClass", "TaskClass"},
               "Generic": {None, "Method", "Task", "Dataset", "MethodClass", "TaskClass"}},
    "readers": {"": {None}},
    # The model's own confident spans on unlabelled abstracts (self-training): a span it was unsure of
    # ("?") may be anything, and adds nothing to the loss.
    "silver": {"": {None}, "?": {None, "Method", "Task", "Dataset", "Metric", "MethodClass", "TaskClass"}},
}
def readers_dev(key: str) -> bool:
    """Whether the tuned annotated abstract ``key`` is in the readers' dev part (a tenth of them, by sha1)."""
    import hashlib

    return int(hashlib.sha1(f"dev:{key}".encode()).hexdigest(), 16) % 10 == 0


@dataclass
class Example:
    """One document on kg's tokens: words, sentence ranges, gold spans and relations (word ranges), and the
    corpus it comes from (``scierc`` or ``scier``)."""

    doc: SciercDoc
    words: list[str]
    token_chars: list[tuple[int, int]]
    sentences: list[tuple[int, int]]
    entities: list[tuple[int, int, str]]
    relations: list[tuple[int, int, int, int, str]]
    corpus: str = "scierc"


def to_example(doc: SciercDoc, tokenizer, corpus: str = "scierc") -> Example:
    """``doc`` re-tokenized by ``tokenizer`` (a spaCy tokenizer), its gold spans aligned to the new tokens."""
    spacy_doc = tokenizer(doc.text)
    words = [t.text for t in spacy_doc]
    chars = [(t.idx, t.idx + len(t)) for t in spacy_doc]
    sentences = []
    for start, end in doc.sentences:
        first, last = doc.offsets[start][0], doc.offsets[end - 1][1]
        inside = [i for i, (s, _) in enumerate(chars) if first <= s < last]
        if inside:
            sentences.append((inside[0], inside[-1] + 1))
    aligned = {}
    for start, end, label in doc.spans:
        span = spacy_doc.char_span(doc.offsets[start][0], doc.offsets[end - 1][1])
        if span is not None:
            aligned[start, end] = (span.start, span.end, label)
    relations = [(*aligned[hs, he][:2], *aligned[ts, te][:2], label) for hs, he, ts, te, label in doc.relations
                 if (hs, he) in aligned and (ts, te) in aligned]
    return Example(doc, words, chars, sentences, sorted(set(aligned.values())), relations, corpus)


def read_examples(paths: Iterable[str | Path], tokenizer, abstracts: Sequence[str | Path] = ()) -> list[Example]:
    """The documents of every file in ``paths`` (SciER, SciERC or kg's annotated abstracts, told apart by
    :func:`corpus_of`) on kg's tokens; annotated abstracts are read from ``abstracts``, held-out part excluded."""
    from ..evaluate.annotated import read_annotated

    examples = []
    for path in paths:
        corpus = corpus_of(path)
        if corpus == "readers":
            docs = [a.doc for a in read_annotated(path, abstracts, held_out=False)]
        else:
            docs = read_scier(path) if corpus == "scier" else read_scierc(path)
        examples.extend(to_example(d, tokenizer, corpus) for d in docs)
    return examples


def as_paths(paths: str | Path | Sequence[str | Path]) -> list[str | Path]:
    return [paths] if isinstance(paths, (str, Path)) else list(paths)


@dataclass
class Target:
    """A chunk with what it should predict: spans and the classes each may take (a boolean row per span, "none"
    first), entity pairs and relation labels."""

    chunk: Chunk
    spans: np.ndarray
    span_allowed: np.ndarray
    pairs: list[tuple[tuple[int, int], tuple[int, int]]]
    pair_entity_labels: list[tuple[int, int]]
    pair_labels: list[int]
    corpus: str = "scierc"


def allowed_classes(corpus: str, label: str, labels: Labels, schema: str) -> frozenset[int]:
    """The class indices (0: none) a span of ``corpus`` with gold ``label`` ("" for none) may take.

    >>> sorted(allowed_classes("scier", "", SCHEMAS["kg"], "kg")), sorted(allowed_classes("scier", "Task", SCHEMAS["kg"], "kg"))
    ([0, 4], [2])
    >>> sorted(allowed_classes("scierc", "Material", SCHEMAS["kg"], "kg")), sorted(allowed_classes("scierc", "", Labels(), "scierc"))
    ([0, 3], [0])
    """
    if schema == "scierc":
        return frozenset({labels.entity.index(label) + 1 if label else 0})
    names = ALLOWED[corpus].get(label, {label})
    return frozenset(labels.entity.index(n) + 1 if n else 0 for n in names if not n or n in labels.entity)


def targets(example: Example, tokenizer, max_pieces: int, labels: Labels = SCHEMAS["scierc"],
            schema: str = "scierc") -> list[Target]:
    words = [example.words[s:e] for s, e in example.sentences]
    classes = len(labels.entity) + 1
    other = np.zeros(classes, dtype=bool)
    other[list(allowed_classes(example.corpus, "", labels, schema))] = True
    # Relations train only on the corpus whose relation types the model has.
    relations = example.corpus in (("scierc",) if schema == "scierc" else ("scier", "readers"))
    out = []
    for chunk in make_chunks(0, words, tokenizer, max_pieces):
        n = len(chunk.first)
        allowed: dict[tuple[int, int], set[int]] = {}
        for s, e, label in example.entities:
            if chunk.offset <= s and e <= chunk.offset + n:
                allowed.setdefault((s - chunk.offset, e - chunk.offset), set()).update(
                    allowed_classes(example.corpus, label, labels, schema))
        local = {span: next(iter(c)) for span, c in allowed.items() if len(c) == 1 and 0 not in c} if relations else {}
        spans = candidate_spans(chunk.sentences)
        rows = np.tile(other, (len(spans), 1))
        index = {(int(s), int(e)): i for i, (s, e) in enumerate(spans)}
        for span, c in allowed.items():
            if span in index:
                rows[index[span]] = False
                rows[index[span], sorted(c)] = True
        gold = {}
        for hs, he, ts, te, label in example.relations if relations else ():
            key = ((hs - chunk.offset, he - chunk.offset), (ts - chunk.offset, te - chunk.offset))
            gold[key] = labels.relation.index(label) + 1
            if label in labels.symmetric:
                gold[key[::-1]] = gold[key]
        sentence_of = {w: i for i, (s, e) in enumerate(chunk.sentences) for w in range(s, e)}
        pairs, pair_entities, pair_labels = [], [], []
        for a, la in local.items():
            for b, lb in local.items():
                if a != b and sentence_of[a[0]] == sentence_of[b[0]]:
                    pairs.append((a, b))
                    pair_entities.append((la - 1, lb - 1))
                    pair_labels.append(gold.get((a, b), 0))
        out.append(Target(chunk, spans, rows, pairs, pair_entities, pair_labels, example.corpus))
    return out


@dataclass
class Prepared:
    """What a run reads, on kg's tokens: training and dev documents, the unlabelled abstracts' texts (what
    the masked-LM stage reads) and, for self-training, the same abstracts as unlabelled documents.
    :func:`prepare` makes it where spaCy and the corpora are; :func:`train_prepared` needs neither, so a
    machine with an accelerator and nothing else can run it (``bench/accelerator_train.py``)."""

    train: list[Example]
    dev: list[Example]
    unlabelled_texts: list[str] = field(default_factory=list)
    unlabelled: list[Example] = field(default_factory=list)


def prepare(train_path, dev_path, settings: dict, abstracts: Sequence[str | Path] = (), *,
            log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> Prepared:
    """The documents of a run (:class:`Prepared`): the training files' (the readers' dev tenth moved to
    dev, their held-out part never read), the dev files', and, where the recipe reads them (masked-LM
    stage, self-training), every abstract of ``abstracts`` no reader labelled."""
    from ..extract.pipeline import load_pipeline
    from .adapt import unlabelled_abstracts

    schema = settings["schema"]
    nlp = load_pipeline(ner=False)
    keep = SCIERC_DOCS[settings["scierc_docs"]]
    examples = [e for e in read_examples(as_paths(train_path), nlp.tokenizer, abstracts)
                if e.corpus != "scierc" or schema == "scierc" or keep(e.doc)]
    train_examples = [e for e in examples if e.corpus != "readers" or not readers_dev(e.doc.doc_key)]
    dev_examples = read_examples(as_paths(dev_path), nlp.tokenizer) + [
        e for e in examples if e.corpus == "readers" and readers_dev(e.doc.doc_key)]
    texts, unlabelled = [], []
    if settings["adapt_epochs"] or settings["silver_weight"]:
        texts = unlabelled_abstracts(as_paths(train_path), abstracts)
    if settings["silver_weight"]:
        from ..evaluate.annotated import _sentences, normalised, to_doc

        for number, text in enumerate(texts):
            text = normalised(text)
            doc = to_doc(f"unlabelled-{number}", text, _sentences(text, nlp), [], [], nlp.tokenizer)
            unlabelled.append(to_example(doc, nlp.tokenizer, "silver"))
    log(f"prepared {len(train_examples)} train and {len(dev_examples)} dev documents, "
        f"{len(texts)} unlabelled abstracts")
    return Prepared(train_examples, dev_examples, texts, unlabelled)


def silver_examples(teacher: SpanModel, unlabelled: Sequence[Example], threshold: float) -> list[Example]:
    """``unlabelled`` labelled by ``teacher``: a span it finds with probability ``threshold`` or more keeps
    its class, a span it finds with less may be anything ("?"), every other span is no entity."""
    out = []
    for example, (entities, _) in zip(unlabelled, teacher.predict([[example.words[s:t] for s, t in example.sentences]
                                                                     for example in unlabelled])):
        words = [w for s, t in example.sentences for w in range(s, t)]
        spans = [(words[e.start], words[e.end - 1] + 1, e.label if e.probability >= threshold else "?")
                 for e in entities]
        out.append(dataclasses.replace(example, entities=sorted(spans), relations=[]))
    return out
