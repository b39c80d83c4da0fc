"""kg.similarity: the static embedding table, entity vectors and the file a build writes."""
import numpy as np
import pytest

from kg.model import Entity, Mention, Paper, PaperExtraction
from kg.kept import Kept
from kg.similarity import Vectors, entity_vectors, graph_vectors, load


@pytest.fixture(scope="module")
def encoder():
    return load()


def cosine(encoder, a: str, b: str) -> float:
    x, y = encoder.encode([a, b])
    return float(x @ y)


def test_an_acronym_is_closer_to_its_long_form_than_to_another_field(encoder):
    assert cosine(encoder, "GAN", "generative adversarial network") > cosine(encoder, "GAN", "machine translation") + 0.2
    assert cosine(encoder, "batch normalization", "layer normalization") > cosine(
        encoder, "batch normalization", "machine translation") + 0.2


def test_vectors_are_unit_length_and_an_unknown_text_is_zero(encoder):
    vectors = encoder.encode(["reinforcement learning", ""])
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)
    assert not vectors[1].any()


def extraction(paper_id: str, text: str, name: str) -> PaperExtraction:
    start = text.index(name)
    return PaperExtraction(Paper(paper_id, text), [(0, len(text))],
                           [Mention(start, start + len(name), name, "Method", 0, 0.9, "rules")], {})


def test_an_entitys_sentences_move_its_vector_towards_their_topic(encoder):
    recurrent = extraction("p1", "We replace the LSTM cell of a recurrent network with a ZQ unit.", "ZQ")
    visual = extraction("p2", "We segment images with a ZQ unit in a convolutional network.", "ZQ")
    vectors = entity_vectors([Entity("zq1", "Method", "ZQ", [], [("p1", 0)]),
                              Entity("zq2", "Method", "ZQ", [], [("p2", 0)])], [recurrent, visual], encoder)
    lstm = encoder.encode(["LSTM recurrent neural network"])[0]
    assert vectors.matrix[0] @ lstm > vectors.matrix[1] @ lstm


def test_vectors_survive_saving_within_a_hundredth(tmp_path, encoder):
    original = Vectors(["method/a", "task/b"], encoder.encode(["dropout", "image captioning"]))
    loaded = Vectors.load(Kept.of(original.save(tmp_path / "g.vectors.npz")))
    assert loaded.nodes == original.nodes
    assert np.abs(loaded.matrix @ loaded.matrix.T - original.matrix @ original.matrix.T).max() < 0.01


def test_a_build_writes_one_vector_per_entity_node(sample_build):
    from kg.query.lookup import read_entities
    from kg.store import open_graph
    from kg.vocab import node_of_iri

    stem, _ = sample_build
    vectors = graph_vectors(stem)
    assert vectors is not None
    entities = {node_of_iri(iri) for iri in read_entities(open_graph(stem)).label}
    assert set(vectors.nodes) == entities
    assert np.allclose(np.linalg.norm(vectors.matrix, axis=1), 1.0, atol=1e-3)


def test_a_graph_without_vectors_has_none(tmp_path):
    assert graph_vectors(tmp_path / "old") is None
