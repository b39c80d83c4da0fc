"""The pair reader: the span model's best candidate pairs of each sentence read again, with typed
markers, by two attention layers of their own (``kg train-pairs``, :mod:`kg.train.pairs`).

The span model's relation head sees each pair through four word pieces and
the words between them, all encoded before anyone knew which pair would be
asked about. The pair reader asks: in the manner of PURE's batched
approximation and PL-Marker's levitated markers, each pair gets four
marker tokens (the start and end of its first span and of its second),
each starting as the encoder's state of the piece it marks plus an
embedding of what it marks (which span, which end, the span's entity
type). Two transformer layers then let the markers attend to the whole
chunk and to each other, the text attending to no marker, so every pair
of a chunk is read in one pass over the encoder states the span model
already computed. The four markers' last states give the pair's class:
none, or one of the model's relations from the first span to the second or
from the second to the first.

Its cost is bounded: only the ``pairs_per_sentence`` pairs the relation
head thinks likeliest are read again (:meth:`kg.extract.spans.SpanModel._relations`).
The reader is plain numpy on float weights (``pairs.npz``, float16 on
disk): no torch at run time.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

#: The reader's weights in a span model's folder, beside ``heads.npz``.
PAIRS_FILE = "pairs.npz"
#: Layer norm's epsilon, as BERT's.
EPSILON = 1e-12


def marker_kinds(labels: np.ndarray, entity_labels: int) -> np.ndarray:
    """The marker kind of each pair's four markers (first span's start and end, second's start and end),
    from the spans' entity label indices (pairs x 2): one kind per (marker, entity label).

    >>> marker_kinds(np.array([[0, 2]]), 6).tolist()
    [[0, 6, 14, 20]]
    """
    slot = np.arange(4) * entity_labels
    return slot[None, :] + labels[:, [0, 0, 1, 1]]


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form (what :mod:`kg.train.pairs` trains with)."""
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + EPSILON) * weight + bias


class PairReader:
    """The reader's weights, named as :class:`kg.train.pairs.Reader`'s state dict, and its settings
    (``heads``: attention heads; ``layers``; ``pairs_per_sentence``)."""

    def __init__(self, weights: dict[str, np.ndarray], settings: dict):
        self.weights = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}
        self.settings = settings
        self.heads = int(settings["heads"])
        self.layers = int(settings["layers"])
        self.pairs_per_sentence = int(settings["pairs_per_sentence"])
        self.blend = float(settings.get("blend", 1.0))

    @classmethod
    def from_file(cls, path: str | Path) -> PairReader:
        with np.load(path) as data:
            settings = json.loads(data["settings"].tobytes().decode())
            weights = {name: data[name] for name in data.files if name != "settings"}
        return cls(weights, settings)

    def save(self, path: str | Path) -> None:
        """Write the weights in float16 (half the size; the dev scores of both agree to the third
        decimal) with the settings, atomically."""
        path = Path(path)
        staging = path.with_name(path.name + ".new")
        with staging.open("wb") as out:
            np.savez(out, settings=np.frombuffer(json.dumps(self.settings).encode(), dtype=np.uint8),
                     **{name: value.astype(np.float16) for name, value in self.weights.items()})
        staging.replace(path)

    def blended(self, row: np.ndarray, forward: np.ndarray, backward: np.ndarray) -> np.ndarray:
        """The reader's ``row`` for a pair mixed with the relation head's rows for its two orders (``blend``:
        the reader's share), the head's read as one unordered pair's classes: related one way only
        where the other way is none.

        >>> reader = PairReader({}, {"heads": 1, "layers": 0, "pairs_per_sentence": 1, "blend": 0.5})
        >>> reader.blended(np.array([0.0, 1.0, 0.0]), np.array([0.5, 0.5]), np.array([1.0, 0.0])).tolist()
        [0.25, 0.75, 0.0]
        """
        if self.blend >= 1.0:
            return row
        head = np.concatenate([[forward[0] * backward[0]], forward[1:] * backward[0], backward[1:] * forward[0]])
        return self.blend * row + (1.0 - self.blend) * head / head.sum()

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.weights[f"{name}.weight"].T + self.weights[f"{name}.bias"]

    def probabilities(self, hidden: np.ndarray, pieces: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Class probabilities of each pair: none, then each relation from the first span to the second,
        then each from the second to the first.

        ``hidden`` is one chunk's encoder states (pieces x size); ``pieces`` (pairs x 4) the pieces each
        pair's markers stand on: the first span's first and last, the second's; ``labels`` (pairs x 2)
        the two spans' entity label indices.
        """
        w = self.weights
        entity_labels = w["kind.weight"].shape[0] // 4
        x = hidden[pieces] + w["kind.weight"][marker_kinds(labels, entity_labels)]  # pairs x 4 x size
        pairs, _, size = x.shape
        heads, width = self.heads, size // self.heads
        scale = 1.0 / np.sqrt(width)
        for n in range(self.layers):
            at = f"layers.{n}"
            text_keys = self._linear(hidden, f"{at}.key").reshape(-1, heads, width)
            text_values = self._linear(hidden, f"{at}.value").reshape(-1, heads, width)
            queries = self._linear(x, f"{at}.query").reshape(pairs, 4, heads, width)
            keys = self._linear(x, f"{at}.key").reshape(pairs, 4, heads, width)
            values = self._linear(x, f"{at}.value").reshape(pairs, 4, heads, width)
            on_text = np.einsum("pihd,lhd->phil", queries, text_keys) * scale
            on_pair = np.einsum("pihd,pjhd->phij", queries, keys) * scale
            scores = np.concatenate([on_text, on_pair], axis=-1)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            length = text_keys.shape[0]
            context = (np.einsum("phil,lhd->pihd", scores[..., :length], text_values)
                       + np.einsum("phij,pjhd->pihd", scores[..., length:], values)).reshape(pairs, 4, size)
            x = layer_norm(x + self._linear(context, f"{at}.output"), w[f"{at}.norm1.weight"], w[f"{at}.norm1.bias"])
            inner = gelu(self._linear(x, f"{at}.up"))
            x = layer_norm(x + self._linear(inner, f"{at}.down"), w[f"{at}.norm2.weight"], w[f"{at}.norm2.bias"])
        out = np.maximum(self._linear(x.reshape(pairs, 4 * size), "out.0"), 0)
        logits = self._linear(out, "out.3")
        logits = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return logits / logits.sum(axis=-1, keepdims=True)
