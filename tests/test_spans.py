"""The encoder-based extractor (kg.extract.spans): chunking, decoding, the numpy heads, and the shipped model."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from tokenizers import Tokenizer

from kg.extract import predict_text, spans
from kg.extract.spans import (ENTITY_LABELS, RELATION_LABELS, TOKENIZER_FILE, SpanModel, candidate_spans,
                              decode_entities, make_chunks)


@pytest.fixture(scope="module")
def tokenizer():
    return Tokenizer.from_file(str(TOKENIZER_FILE))


def test_sentences_pack_into_chunks_that_fit_the_encoder(tokenizer):
    sentences = [["We", "study", "graph", "neural", "networks", "."]] * 30
    chunks = make_chunks(0, sentences, tokenizer, max_pieces=40)
    assert all(len(c.ids) <= 40 for c in chunks)
    assert sum(len(c.first) for c in chunks) == 180  # every word lands in exactly one chunk
    assert [c.offset for c in chunks] == [sum(len(c.first) for c in chunks[:i]) for i in range(len(chunks))]
    assert all(c.ids[0] == tokenizer.token_to_id("[CLS]") and c.ids[-1] == tokenizer.token_to_id("[SEP]")
               for c in chunks)


def test_a_sentence_longer_than_a_chunk_is_cut_into_parts(tokenizer):
    [long] = [["token"] * 100]
    chunks = make_chunks(0, [long], tokenizer, max_pieces=32)
    assert all(len(c.ids) <= 32 for c in chunks)
    assert sum(e - s for c in chunks for s, e in c.sentences) == 100


def test_a_word_the_tokenizer_drops_still_has_a_piece(tokenizer):
    [chunk] = make_chunks(0, [["a", "\u200b", "b"]], tokenizer)
    assert len(chunk.first) == 3 and chunk.ids[chunk.first[1]] == tokenizer.token_to_id("[UNK]")


def test_candidate_spans_stay_inside_sentences():
    found = {tuple(s) for s in candidate_spans([(0, 3), (3, 5)], max_width=2).tolist()}
    assert found == {(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (3, 4), (3, 5), (4, 5)}


def test_decoding_keeps_the_most_probable_of_overlapping_spans():
    candidates = np.array([[0, 2], [1, 3], [3, 4], [4, 5]])
    probabilities = np.array([[0.2, 0.7, 0.1, 0, 0, 0, 0],   # Task, 0.7
                              [0.1, 0.0, 0.9, 0, 0, 0, 0],   # Method, 0.9, overlaps the first
                              [0.9, 0.1, 0.0, 0, 0, 0, 0],   # none
                              [0.4, 0.0, 0.0, 0.6, 0, 0, 0]])  # Metric
    assert decode_entities(candidates, probabilities) == [(1, 3, 1, 0.9), (4, 5, 2, 0.6)]


def _random_model(size=8, hidden=5, width_dim=3, label_dim=2, seed=0):
    rng = np.random.default_rng(seed)
    states = {}

    def encoder(ids, mask):
        states["hidden"] = rng.normal(size=(*ids.shape, size)).astype(np.float32)
        return states["hidden"]

    weights = {"width.weight": rng.normal(size=(spans.MAX_WIDTH + 1, width_dim)),
               "label.weight": rng.normal(size=(len(ENTITY_LABELS), label_dim)),
               "entity.0.weight": rng.normal(size=(hidden, 2 * size + width_dim)), "entity.0.bias": rng.normal(size=hidden),
               "entity.3.weight": rng.normal(size=(len(ENTITY_LABELS) + 1, hidden)),
               "entity.3.bias": rng.normal(size=len(ENTITY_LABELS) + 1),
               "relation.0.weight": rng.normal(size=(hidden, 5 * size + 2 * label_dim)),
               "relation.0.bias": rng.normal(size=hidden),
               "relation.3.weight": rng.normal(size=(len(RELATION_LABELS) + 1, hidden)),
               "relation.3.bias": rng.normal(size=len(RELATION_LABELS) + 1)}
    return SpanModel(encoder, weights, Tokenizer.from_file(str(TOKENIZER_FILE)))


def _mlp(weights, name, x):
    layer = np.maximum(x @ weights[f"{name}.0.weight"].T + weights[f"{name}.0.bias"], 0)
    logits = layer @ weights[f"{name}.3.weight"].T + weights[f"{name}.3.bias"]
    return np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)


def test_the_entity_head_is_the_trained_network_on_first_piece_last_piece_and_width(tokenizer):
    model = _random_model()
    [chunk] = make_chunks(0, [["Graph", "transformers", "for", "molecules", "."]], tokenizer)
    [hidden] = model.encode([chunk])
    candidates = candidate_spans(chunk.sentences)
    w = model.weights
    inputs = np.stack([np.concatenate([hidden[chunk.first[s]], hidden[chunk.last[e - 1]], w["width.weight"][e - s]])
                       for s, e in candidates])
    assert np.allclose(model.entity_probabilities(hidden, chunk, candidates), _mlp(w, "entity", inputs), atol=1e-5)


def test_the_relation_head_reads_both_spans_their_labels_and_the_words_between(tokenizer):
    model = _random_model()
    [chunk] = make_chunks(0, [["CRFs", "are", "used", "for", "tagging", "."]], tokenizer)
    [hidden] = model.encode([chunk])
    pairs = [((0, 1), (4, 5)), ((4, 5), (0, 1)), ((0, 1), (1, 2))]
    labels = np.array([[1, 0], [0, 1], [1, 5]])
    w = model.weights
    rows = []
    for ((a0, a1), (b0, b1)), (la, lb) in zip(pairs, labels):
        left, right = sorted([(a0, a1), (b0, b1)])
        gap = hidden[chunk.last[left[1] - 1] + 1 : chunk.first[right[0]]]
        rows.append(np.concatenate([hidden[chunk.first[a0]], hidden[chunk.last[a1 - 1]], hidden[chunk.first[b0]],
                                    hidden[chunk.last[b1 - 1]], w["label.weight"][la], w["label.weight"][lb],
                                    gap.max(axis=0) if len(gap) else np.zeros(hidden.shape[1])]))
    expected = _mlp(w, "relation", np.stack(rows))
    assert np.allclose(model.relation_probabilities(hidden, chunk, pairs, labels), expected, atol=1e-5)


def test_the_shipped_model_finds_a_method_its_task_and_the_relation():
    text = "We propose a graph-based parser for semantic role labeling."
    entities, relations = predict_text(text)
    parser, task = (13, 31), (36, 58)
    assert text[slice(*parser)] == "graph-based parser" and text[slice(*task)] == "semantic role labeling"
    assert (*parser, "Method") in entities and (*task, "Task") in entities
    assert (*parser, *task, "Used-For") in relations


def test_kg_build_runs_the_encoder_without_importing_torch(tmp_path):
    corpus = tmp_path / "abstracts.txt"
    corpus.write_text("# test collection\n\nWe propose GraphMix, a method for node classification on Cora.\n")
    # None in sys.modules makes an import fail, as where the train extra is not installed (thinc
    # imports torch whenever it is installed, so its absence is what shows kg does not need it).
    script = ("import sys; sys.modules.update(torch=None, transformers=None); from kg.build import build; "
              f"build([{str(corpus)!r}], {str(tmp_path / 'out' / 'g')!r}, processes=1, cache=None); "
              "from kg.extract.pipeline import load_pipeline; "
              "assert 'scierc_spans' in load_pipeline().pipe_names; "
              "assert 'onnxruntime' in sys.modules; "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers') and sys.modules[m]))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
