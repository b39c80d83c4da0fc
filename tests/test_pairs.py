"""The pair reader (kg.extract.pairs): typed markers read against the encoder's states, its numpy
twin of the trained network, and the bound on what it reads again."""
from __future__ import annotations

import numpy as np
import pytest

from kg.extract.pairs import PAIRS_FILE, PairReader
from kg.extract.spans import SpanModel, load_span_model, make_chunks


def _random_reader(size=384, heads=12, inner=8, hidden=4, entity_labels=6, relations=9, pairs_per_sentence=4,
                   seed=0) -> PairReader:
    rng = np.random.default_rng(seed)
    weights = {"kind.weight": rng.normal(size=(4 * entity_labels, size)),
               "out.0.weight": rng.normal(size=(hidden, 4 * size)) / 10, "out.0.bias": rng.normal(size=hidden),
               "out.3.weight": rng.normal(size=(1 + 2 * relations, hidden)), "out.3.bias": rng.normal(size=1 + 2 * relations)}
    for n in range(2):
        for name in ("query", "key", "value", "output"):
            weights[f"layers.{n}.{name}.weight"] = rng.normal(size=(size, size)) / np.sqrt(size)
            weights[f"layers.{n}.{name}.bias"] = rng.normal(size=size) / 10
        weights[f"layers.{n}.up.weight"], weights[f"layers.{n}.up.bias"] = rng.normal(size=(inner, size)), rng.normal(size=inner)
        weights[f"layers.{n}.down.weight"], weights[f"layers.{n}.down.bias"] = rng.normal(size=(size, inner)), rng.normal(size=size)
        for norm in ("norm1", "norm2"):
            weights[f"layers.{n}.{norm}.weight"], weights[f"layers.{n}.{norm}.bias"] = np.ones(size), np.zeros(size)
    return PairReader(weights, {"heads": heads, "layers": 2, "pairs_per_sentence": pairs_per_sentence})


def test_a_pair_is_read_the_same_whatever_other_pairs_share_its_pass():
    reader = _random_reader()
    rng = np.random.default_rng(1)
    hidden = rng.normal(size=(12, 384)).astype(np.float32)
    pieces, labels = np.array([[1, 2, 5, 5], [3, 3, 8, 10], [1, 1, 10, 11]]), np.array([[0, 1], [2, 3], [4, 5]])
    together = reader.probabilities(hidden, pieces, labels)
    alone = np.vstack([reader.probabilities(hidden, pieces[[n]], labels[[n]]) for n in range(3)])
    assert together.shape == (3, 19) and np.allclose(together.sum(axis=1), 1)
    assert np.allclose(together, alone, atol=1e-6)
    # The markers read the text: a word's state that no marker stands on still changes what they conclude.
    changed = hidden.copy()
    changed[6] += 3.0
    assert not np.allclose(reader.probabilities(changed, pieces, labels), together, atol=1e-4)
    # and they are typed: the same pieces under other entity types read differently.
    assert not np.allclose(reader.probabilities(hidden, pieces, labels[:, ::-1]), together, atol=1e-4)


def test_the_numpy_reader_is_the_trained_network():
    torch = pytest.importorskip("torch")
    from kg.train.pairs import DEFAULTS, build_reader, to_numpy

    torch.manual_seed(0)
    reader = build_reader(DEFAULTS, 6, 9).eval()
    rng = np.random.default_rng(0)
    text = rng.normal(size=(1, 20, 384)).astype(np.float32)
    pieces, labels = rng.integers(0, 20, size=(1, 5, 4)), rng.integers(0, 6, size=(1, 5, 2))
    with torch.no_grad():
        expected = reader(torch.from_numpy(text), torch.ones((1, 20), dtype=torch.bool), torch.from_numpy(pieces),
                          torch.from_numpy(labels)).softmax(dim=-1).numpy()[0]
    assert np.allclose(to_numpy(reader, DEFAULTS).probabilities(text[0], pieces[0], labels[0]), expected, atol=1e-5)


SENTENCE = ["We", "compare", "BERT", "and", "GPT-2", "on", "SQuAD", "for", "question", "answering", "."]


def _with_reader(reader: PairReader | None) -> SpanModel:
    shipped = load_span_model()
    return SpanModel(shipped.encoder, shipped.weights, shipped.tokenizer, labels=shipped.labels, pairs=reader)


def test_the_reader_decides_only_the_pairs_the_relation_head_finds_likeliest():
    alone = _with_reader(None)
    [(entities, head_relations)] = alone.predict([[SENTENCE]])
    assert len(entities) >= 3
    [chunk] = make_chunks(0, [SENTENCE], alone.tokenizer)
    [hidden] = alone.encode([chunk])
    label_index = [alone.labels.entity.index(e.label) for e in entities]
    ordered = [(i, j) for i in range(len(entities)) for j in range(len(entities)) if i != j]
    rows = alone.relation_probabilities(hidden, chunk, [((entities[i].start, entities[i].end), (entities[j].start, entities[j].end))
                                                        for i, j in ordered], np.array([(label_index[i], label_index[j]) for i, j in ordered]))
    related = {}
    for (i, j), none in zip(ordered, rows[:, 0]):
        related[min(i, j), max(i, j)] = max(related.get((min(i, j), max(i, j)), 0), 1 - none)
    likeliest = max(related, key=related.get)

    reader = _random_reader(pairs_per_sentence=1)
    reader.weights["out.3.bias"][:] = -50
    reader.weights["out.3.bias"][1 + 9] = 50  # always: the first relation, from the second span to the first
    [(_, relations)] = _with_reader(reader).predict([[SENTENCE]])
    first, second = likeliest
    decided = [r for r in relations if {r.head, r.tail} == {first, second}]
    assert [(r.head, r.tail, r.label) for r in decided] == [(second, first, alone.labels.relation[0])]
    untouched = [(r.head, r.tail, r.label) for r in head_relations if {r.head, r.tail} != {first, second}]
    assert [(r.head, r.tail, r.label) for r in relations if r not in decided] == untouched

    reader.pairs_per_sentence = 0
    assert _with_reader(reader).predict([[SENTENCE]]) == alone.predict([[SENTENCE]])


def test_a_saved_reader_loads_in_half_precision_and_is_part_of_the_model_version(tmp_path):
    import shutil

    from kg.extract.spans import MODEL_DIR

    for name in ("encoder.onnx", "heads.npz", "tokenizer.json", "config.json"):
        shutil.copy(MODEL_DIR / name, tmp_path / name)
    without = SpanModel.from_files(tmp_path)
    reader = _random_reader(pairs_per_sentence=3)
    reader.save(tmp_path / PAIRS_FILE)
    loaded = SpanModel.from_files(tmp_path)
    assert without.pairs is None and loaded.pairs.pairs_per_sentence == 3
    assert loaded.version != without.version
    for name, value in reader.weights.items():
        assert np.allclose(loaded.pairs.weights[name], value, rtol=1e-3, atol=1e-3)
    assert not list(tmp_path.glob("*.new"))
