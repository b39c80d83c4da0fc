"""Entities and the relations between them from a fine-tuned MiniLM encoder, run with onnxruntime.

The model (``kg train-ner``, :mod:`kg.train.spans`) is a span classifier in
the manner of PURE and SpERT, on one shared encoder:

- the words of an abstract, packed sentence by sentence into chunks of at
  most ``MAX_PIECES`` word pieces, pass once through the encoder;
- every span of at most ``MAX_WIDTH`` words inside a sentence is scored by
  the entity head, from its first and last pieces and a width embedding;
  the best-scoring spans that do not overlap are kept;
- every ordered pair of kept spans in a sentence is scored by the relation
  head, from both spans, their labels and the words between them.

What ships is the int8 ONNX encoder, the heads' weights and the tokenizer.
Running it needs numpy, ``onnxruntime`` and ``tokenizers``: no torch.
The labels belong to the model: training writes its entity labels, relation
labels and which relations are symmetric into ``config.json``'s ``labels``
(:func:`model_labels`), and a model whose config has none has SciERC's.

Example
-------
>>> [(entities, relations)] = load_span_model().predict([[["A", "graph-based", "parser", "for", "semantic",
...                                                          "role", "labeling", "."]]])
>>> [(e.start, e.end, e.label) for e in entities], [(r.head, r.tail, r.label) for r in relations]
([(1, 3, 'Method'), (4, 7, 'Task')], [(0, 1, 'Used-For')])
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from ..vocab import SCIERC_RELATIONS, SCIERC_SYMMETRIC, SCIERC_TYPES

#: Where the trained model lives in the package.
MODEL_DIR = Path(__file__).parent / "span_model"
ENCODER_FILE = MODEL_DIR / "encoder.onnx"
HEADS_FILE = MODEL_DIR / "heads.npz"
TOKENIZER_FILE = MODEL_DIR / "tokenizer.json"

#: The classes of a model whose config.json names none: SciERC's entity and relation types.
ENTITY_LABELS = SCIERC_TYPES
RELATION_LABELS = SCIERC_RELATIONS
SYMMETRIC = SCIERC_SYMMETRIC
#: The longest span scored, in words (SciERC: 99% of entities in train).
MAX_WIDTH = 8
#: The longest chunk the encoder reads, in word pieces, [CLS] and [SEP] included.
MAX_PIECES = 256
#: A word with more pieces than this (a URL, a formula) is cut: its first pieces carry its meaning.
MAX_PIECES_PER_WORD = 12


@dataclass
class Chunk:
    """Consecutive sentences of one document, as the encoder reads them.

    ``ids`` are the word pieces with [CLS] and [SEP]; ``first[k]`` and
    ``last[k]`` are the first and last piece of the chunk's ``k``-th word;
    ``sentences`` are word ranges counted in the chunk; ``offset`` is the
    document index of the chunk's first word.
    """

    doc: int
    offset: int
    ids: list[int] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    last: list[int] = field(default_factory=list)
    sentences: list[tuple[int, int]] = field(default_factory=list)


def word_pieces(tokenizer, words: Sequence[str]) -> list[list[int]]:
    """The word-piece ids of each word (``[UNK]`` for a word the tokenizer drops, such as a control character)."""
    if not words:
        return []
    encoding = tokenizer.encode(list(words), is_pretokenized=True, add_special_tokens=False)
    pieces: list[list[int]] = [[] for _ in words]
    for piece, word in zip(encoding.ids, encoding.word_ids):
        if word is not None and len(pieces[word]) < MAX_PIECES_PER_WORD:
            pieces[word].append(piece)
    unk = tokenizer.token_to_id("[UNK]")
    return [p or [unk] for p in pieces]


def make_chunks(doc: int, sentences: Sequence[Sequence[str]], tokenizer, max_pieces: int = MAX_PIECES) -> list[Chunk]:
    """Pack a document's sentences (lists of words) into chunks of at most ``max_pieces`` pieces.

    A sentence too long for one chunk is cut into parts that each fit; spans
    never cross a sentence (or part) boundary.

    >>> from tokenizers import Tokenizer
    >>> tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
    >>> [c.sentences for c in make_chunks(0, [["We", "use", "CRFs", "."], ["It", "works", "."]], tokenizer)]
    [[(0, 4), (4, 7)]]
    """
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    budget = max_pieces - 2
    parts: list[list[list[int]]] = []  # each sentence part: the pieces of its words
    for words in sentences:
        part: list[list[int]] = []
        size = 0
        for pieces in word_pieces(tokenizer, words):
            if part and size + len(pieces) > budget:
                parts.append(part)
                part, size = [], 0
            part.append(pieces)
            size += len(pieces)
        parts.append(part)
    chunks: list[Chunk] = []
    chunk, words_done = None, 0
    for part in parts:
        size = sum(len(p) for p in part)
        if chunk is None or len(chunk.ids) + size + 1 > max_pieces:
            if chunk is not None:
                chunk.ids.append(sep)
                chunks.append(chunk)
            chunk = Chunk(doc=doc, offset=words_done, ids=[cls])
        start = len(chunk.first)
        for pieces in part:
            chunk.first.append(len(chunk.ids))
            chunk.ids.extend(pieces)
            chunk.last.append(len(chunk.ids) - 1)
        chunk.sentences.append((start, len(chunk.first)))
        words_done += len(part)
    if chunk is not None:
        chunk.ids.append(sep)
        chunks.append(chunk)
    return chunks


def candidate_spans(sentences: Sequence[tuple[int, int]], max_width: int = MAX_WIDTH) -> np.ndarray:
    """Every ``(start, end)`` word span (end exclusive) of at most ``max_width`` words inside one sentence.

    >>> candidate_spans([(0, 2), (2, 3)]).tolist()
    [[0, 1], [0, 2], [1, 2], [2, 3]]
    """
    spans = [(start, end) for first, stop in sentences for start in range(first, stop)
             for end in range(start + 1, min(start + max_width, stop) + 1)]
    return np.array(spans, dtype=np.int64).reshape(-1, 2)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0, out=x)


def _softmax(x: np.ndarray) -> np.ndarray:
    x = np.exp(x - x.max(axis=-1, keepdims=True))
    return x / x.sum(axis=-1, keepdims=True)


def between_pieces(chunk: Chunk, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The piece range strictly between two word spans (empty when they touch or overlap)."""
    left, right = (a, b) if a[0] <= b[0] else (b, a)
    return chunk.last[left[1] - 1] + 1, chunk.first[right[0]]


def decode_entities(spans: np.ndarray, probabilities: np.ndarray) -> list[tuple[int, int, int, float]]:
    """The spans whose best class is an entity, best first, skipping any that overlaps one already kept.

    Returns ``(start, end, label index, probability)`` sorted by start.
    """
    best = probabilities[:, 1:].argmax(axis=1)
    score = probabilities[np.arange(len(best)), best + 1]
    found = np.flatnonzero(score > probabilities[:, 0])
    kept: list[tuple[int, int, int, float]] = []
    taken: set[int] = set()
    for index in found[np.argsort(-score[found], kind="stable")]:
        start, end = int(spans[index, 0]), int(spans[index, 1])
        if taken.isdisjoint(range(start, end)):
            kept.append((start, end, int(best[index]), float(score[index])))
            taken.update(range(start, end))
    return sorted(kept)


@dataclass(frozen=True)
class Labels:
    """A model's classes: entity labels and relation labels (in the order of its heads' outputs, after
    "none"), and the relations that go both ways."""

    entity: tuple[str, ...] = ENTITY_LABELS
    relation: tuple[str, ...] = RELATION_LABELS
    symmetric: frozenset[str] = SYMMETRIC

    def to_json(self) -> dict:
        """As ``config.json``'s ``labels`` holds them."""
        return {"entity": list(self.entity), "relation": list(self.relation),
                "symmetric": [r for r in self.relation if r in self.symmetric]}

    @classmethod
    def from_json(cls, record: dict | None) -> Labels:
        """From ``config.json``'s ``labels``; SciERC's where it names none (the model shipped before labels
        were written down).

        >>> Labels.from_json(None) == Labels()
        True
        >>> Labels.from_json({"entity": ["Task"], "relation": ["Used-For"], "symmetric": []}).entity
        ('Task',)
        """
        if not record:
            return cls()
        return cls(tuple(record["entity"]), tuple(record["relation"]), frozenset(record.get("symmetric", ())))


def model_labels(directory: Path = MODEL_DIR) -> Labels:
    """The labels of the model saved in ``directory``, read from its ``config.json``."""
    path = Path(directory) / "config.json"
    return Labels.from_json(json.loads(path.read_text()).get("labels") if path.exists() else None)


@dataclass(frozen=True)
class Entity:
    """An entity the model found: a word span of its document (end exclusive), one of the model's labels,
    a probability."""

    start: int
    end: int
    label: str
    probability: float


@dataclass(frozen=True)
class Relation:
    """A relation between two of a document's entities (indices into its entity list), with its probability."""

    head: int
    tail: int
    label: str
    probability: float


class SpanModel:
    """The two heads (numpy weights) on an encoder: a function from padded piece ids and mask to hidden states.

    ``SpanModel.from_files()`` runs the shipped ONNX encoder with onnxruntime;
    training passes its torch encoder instead, so dev scores come from this
    very decoding.
    """

    def __init__(self, encoder: Callable[[np.ndarray, np.ndarray], np.ndarray], weights: dict[str, np.ndarray],
                 tokenizer, *, version: str = "", labels: Labels | None = None):
        self.encoder = encoder
        self.weights = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}
        self.tokenizer = tokenizer
        self.version = version
        self.labels = labels or Labels()
        for name, classes in (("entity", self.labels.entity), ("relation", self.labels.relation)):
            outputs = self.weights[f"{name}.3.bias"].shape[0] if f"{name}.3.bias" in self.weights else len(classes) + 1
            if outputs != len(classes) + 1:
                raise ValueError(f"the {name} head has {outputs} outputs but the model names {len(classes)} "
                                 f"{name} labels (plus none): its config.json's labels do not fit its heads.npz")

    @classmethod
    def from_files(cls, directory: Path = MODEL_DIR, *, threads: int | None = None) -> SpanModel:
        """The model saved in ``directory`` (``encoder.onnx``, ``heads.npz``, ``tokenizer.json``, and the labels
        in ``config.json``)."""
        import onnxruntime
        from tokenizers import Tokenizer

        directory = Path(directory)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(str(directory / ENCODER_FILE.name), options,
                                               providers=["CPUExecutionProvider"])

        def encoder(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
            return session.run(None, {"input_ids": ids, "attention_mask": mask})[0]

        heads = (directory / HEADS_FILE.name).read_bytes()
        with np.load(directory / HEADS_FILE.name) as weights:
            arrays = {name: weights[name] for name in weights.files}
        digest = hashlib.sha1(heads + (directory / ENCODER_FILE.name).read_bytes()).hexdigest()[:8]
        return cls(encoder, arrays, Tokenizer.from_file(str(directory / TOKENIZER_FILE.name)), version=digest,
                   labels=model_labels(directory))

    def encode(self, chunks: Sequence[Chunk]) -> list[np.ndarray]:
        """The encoder's last hidden states of each chunk (pieces × hidden).

        One chunk at a time: the int8 encoder scales its activations by their
        range over the whole batch, so a chunk batched with others could come out
        differently, and a paper's extraction must not depend on its neighbours.
        It costs little: on one core, 6,000 words/s alone, 6,500 in twos, 3,700 in
        sixteens (small batches stay in cache).
        """
        return [np.asarray(self.encoder(np.array([c.ids], dtype=np.int64), np.ones((1, len(c.ids)), dtype=np.int64))[0],
                           dtype=np.float32) for c in chunks]

    def _split(self, name: str, sizes: Sequence[int]) -> list[np.ndarray]:
        """The first layer of head ``name`` cut into the blocks that multiply each part of its input."""
        return np.split(self.weights[f"{name}.0.weight"], np.cumsum(sizes)[:-1], axis=1)

    def _output(self, name: str, first_layer: np.ndarray) -> np.ndarray:
        w = self.weights
        return _softmax(_relu(first_layer + w[f"{name}.0.bias"]) @ w[f"{name}.3.weight"].T + w[f"{name}.3.bias"])

    def entity_probabilities(self, hidden: np.ndarray, chunk: Chunk, spans: np.ndarray) -> np.ndarray:
        """Class probabilities (none first, then the model's entity labels) of word ``spans`` of ``chunk``.

        The head's input is [first piece; last piece; width embedding]; its first
        layer is applied to each part before the spans pick their rows, which
        is the same sum for a fraction of the work.
        """
        width = self.weights["width.weight"]
        size = hidden.shape[1]
        on_first, on_last, on_width = self._split("entity", [size, size, width.shape[1]])
        first = (hidden @ on_first.T)[np.asarray(chunk.first)[spans[:, 0]]]
        last = (hidden @ on_last.T)[np.asarray(chunk.last)[spans[:, 1] - 1]]
        return self._output("entity", first + last + (width @ on_width.T)[spans[:, 1] - spans[:, 0]])

    def relation_probabilities(self, hidden: np.ndarray, chunk: Chunk, pairs: Sequence[tuple[tuple[int, int], tuple[int, int]]],
                               labels: np.ndarray) -> np.ndarray:
        """Class probabilities (none first, then the model's relation labels) of ordered span pairs with entity
        ``labels`` (indices into the model's entity labels).

        The head's input is [a's first and last piece; b's; a's and b's label
        embeddings; the max-pooled pieces between them (zeros when none)].
        """
        table = self.weights["label.weight"]
        size = hidden.shape[1]
        a_first, a_last, b_first, b_last, a_label, b_label, on_gap = self._split(
            "relation", [size] * 4 + [table.shape[1]] * 2 + [size])
        a = np.array([p[0] for p in pairs])
        b = np.array([p[1] for p in pairs])
        first, last = np.asarray(chunk.first), np.asarray(chunk.last)
        gaps = np.zeros((len(pairs), size), dtype=hidden.dtype)
        for row, (left, right) in enumerate(pairs):
            start, end = between_pieces(chunk, left, right)
            if end > start:
                gaps[row] = hidden[start:end].max(axis=0)
        layer = ((hidden @ a_first.T)[first[a[:, 0]]] + (hidden @ a_last.T)[last[a[:, 1] - 1]]
                 + (hidden @ b_first.T)[first[b[:, 0]]] + (hidden @ b_last.T)[last[b[:, 1] - 1]]
                 + (table @ a_label.T)[labels[:, 0]] + (table @ b_label.T)[labels[:, 1]] + gaps @ on_gap.T)
        return self._output("relation", layer)

    def predict(self, documents: Sequence[Sequence[Sequence[str]]]) -> list[tuple[list[Entity], list[Relation]]]:
        """Entities and relations of each document, given as sentences of words.

        Word spans count over the whole document's words, in order.
        """
        return [(entities, relations) for entities, relations, _ in self.read(documents)]

    def read(self, documents: Sequence[Sequence[Sequence[str]]]) -> list[tuple[list[Entity], list[Relation], np.ndarray]]:
        """:meth:`predict`'s entities and relations of each document, and each of its words' vector in
        context (words x hidden: the mean of the encoder's last states over the word's pieces), from the
        same pass: what the build pools into the entities' vectors (:func:`kg.similarity.pooled_contexts`)."""
        chunks = [c for index, sentences in enumerate(documents)
                  for c in make_chunks(index, sentences, self.tokenizer)]
        results: list[tuple[list[Entity], list[Relation], np.ndarray]] = [
            ([], [], np.zeros((sum(map(len, sentences)), 0), dtype=np.float32)) for sentences in documents]
        for chunk, hidden in zip(chunks, self.encode(chunks)):
            words = results[chunk.doc][2]
            if words.shape[1] != hidden.shape[1]:
                words = np.zeros((len(words), hidden.shape[1]), dtype=np.float32)
                results[chunk.doc] = (*results[chunk.doc][:2], words)
            sums = np.cumsum(np.vstack([np.zeros((1, hidden.shape[1]), dtype=np.float32), hidden]), axis=0)
            first, last = np.asarray(chunk.first, dtype=int), np.asarray(chunk.last, dtype=int)
            words[chunk.offset:chunk.offset + len(first)] = (sums[last + 1] - sums[first]) / (last - first + 1)[:, None]
            spans = candidate_spans(chunk.sentences)
            if not len(spans):
                continue
            found = decode_entities(spans, self.entity_probabilities(hidden, chunk, spans))
            entities, links, _ = results[chunk.doc]
            base = len(entities)
            entities.extend(Entity(chunk.offset + s, chunk.offset + e, self.labels.entity[k], round(p, 3))
                            for s, e, k, p in found)
            links.extend(self._relations(hidden, chunk, found, base))
        return results

    def _relations(self, hidden, chunk: Chunk, found, base: int) -> list[Relation]:
        sentence_of = {}
        for index, (start, end) in enumerate(chunk.sentences):
            sentence_of.update(dict.fromkeys(range(start, end), index))
        pairs, labels, indices = [], [], []
        for i, (si, ei, ki, _) in enumerate(found):
            for j, (sj, ej, kj, _) in enumerate(found):
                if i != j and sentence_of[si] == sentence_of[sj]:
                    pairs.append(((si, ei), (sj, ej)))
                    labels.append((ki, kj))
                    indices.append((i, j))
        if not pairs:
            return []
        probabilities = self.relation_probabilities(hidden, chunk, pairs, np.array(labels))
        out, seen = [], set()
        for (i, j), row in zip(indices, probabilities):
            k = int(row[1:].argmax())
            if row[k + 1] <= row[0]:
                continue
            label = self.labels.relation[k]
            key = (min(i, j), max(i, j), label) if label in self.labels.symmetric else (i, j, label)
            if key in seen:
                continue
            seen.add(key)
            out.append(Relation(base + i, base + j, label, round(float(row[k + 1]), 3)))
        return out


def shipped() -> bool:
    """Whether the package carries the model (a checkout may have been made without it)."""
    return ENCODER_FILE.exists() and HEADS_FILE.exists()


@functools.cache
def encoder_digest(directory: Path = MODEL_DIR) -> str:
    """The first 12 hex digits of the SHA-1 of the encoder in ``directory`` ("" where none ships): what a
    learned layer fitted on its states records, so that another encoder's states are never read with it."""
    path = Path(directory) / ENCODER_FILE.name
    return hashlib.sha1(path.read_bytes()).hexdigest()[:12] if path.exists() else ""


@functools.lru_cache(maxsize=None)
def load_span_model(threads: int | None = None) -> SpanModel:
    """The shipped model, loaded once per process and thread count."""
    return SpanModel.from_files(threads=threads)


def config() -> dict:
    """The shipped model's training config and dev scores (``MODEL_DIR / 'config.json'``)."""
    path = MODEL_DIR / "config.json"
    return json.loads(path.read_text()) if path.exists() else {}


# The model as a spaCy component: it reads the sentences of every abstract in an
# ``nlp.pipe`` batch, and leaves its entities in ``doc.ents`` (SciERC labels) and its
# relations in ``doc._.relations``.

#: The component's name in kg's pipeline.
COMPONENT = "scierc_spans"

for _name in ("relations", "entity_probabilities"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=())
if not Doc.has_extension("word_vectors"):
    Doc.set_extension("word_vectors", default=None)


class SpanComponent:
    """Sets ``doc.ents`` to the span model's entities, ``doc._.relations`` to ``(head ent, tail ent,
    SciERC type, probability)`` tuples, indices into ``doc.ents``, and ``doc._.word_vectors`` to each
    token's vector in context (tokens x hidden; zeros for a space). Needs sentences (the parser) before it."""

    def __init__(self, threads: int | None = None):
        self.threads = threads

    @property
    def model(self) -> SpanModel:
        # Loaded on first use, in the process that runs it: an onnxruntime session does not survive a fork.
        return load_span_model(self.threads)

    def __call__(self, doc: Doc) -> Doc:
        return next(iter(self.pipe([doc])))

    def pipe(self, docs, batch_size: int = 64):
        for batch in minibatch(docs, size=batch_size):
            yield from self._annotate(list(batch))

    def _annotate(self, docs: list[Doc]) -> list[Doc]:
        documents, tokens = [], []
        for doc in docs:
            kept = [[t for t in sent if not t.is_space] for sent in doc.sents]
            documents.append([[t.text for t in sent] for sent in kept if sent])
            tokens.append([t.i for sent in kept for t in sent])
        for doc, words, (entities, relations, vectors) in zip(docs, tokens, self.model.read(documents)):
            doc._.word_vectors = np.zeros((len(doc), vectors.shape[1]), dtype=np.float32)
            doc._.word_vectors[words] = vectors
            doc.ents = [Span(doc, words[e.start], words[e.end - 1] + 1, label=e.label) for e in entities]
            doc._.entity_probabilities = tuple(e.probability for e in entities)
            doc._.relations = tuple((r.head, r.tail, r.label, r.probability) for r in relations)
        return docs


@Language.factory(COMPONENT, default_config={"threads": None})
def make_span_component(nlp: Language, name: str, threads: int | None) -> SpanComponent:
    return SpanComponent(threads)
