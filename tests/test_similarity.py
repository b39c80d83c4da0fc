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


def test_a_sentence_naming_several_entities_is_read_once_and_each_gets_what_it_alone_would(encoder):
    text = "We train GAN and VAE models on faces."
    both = PaperExtraction(Paper("p1", text), [(0, len(text))],
                           [Mention(9, 12, "GAN", "Method", 0, 0.9, "rules"), Mention(17, 20, "VAE", "Method", 0, 0.9, "rules")], {})
    gan, vae = Entity("gan", "Method", "GAN", [], [("p1", 0)]), Entity("vae", "Method", "VAE", [], [("p1", 1)])
    read = []

    class Counting:
        def encode(self, texts):
            read.extend(texts)
            return encoder.encode(texts)

    together = entity_vectors([gan, vae], [both], Counting())
    assert read.count(text) == 1
    for row, entity in enumerate([gan, vae]):
        assert np.array_equal(together.matrix[row], entity_vectors([entity], [both], encoder).matrix[0])


def test_vectors_survive_saving_within_a_hundredth(tmp_path, encoder):
    original = Vectors(["method/a", "task/b"], encoder.encode(["dropout", "image captioning"]))
    loaded = Vectors.load(Kept.of(original.save(tmp_path / "g.vectors.npz")))
    assert loaded.nodes == original.nodes
    assert np.abs(loaded.matrix @ loaded.matrix.T - original.matrix @ original.matrix.T).max() < 0.01


def test_a_build_writes_one_vector_per_entity_node(sample_build):
    from kg.query.graph_index import read_tables

    stem, _ = sample_build
    vectors = graph_vectors(stem)
    assert vectors is not None
    tables = read_tables(stem)
    entities = set(tables.ids[:tables.first])
    assert set(vectors.nodes) == entities
    assert np.allclose(np.linalg.norm(vectors.matrix, axis=1), 1.0, atol=1e-3)
    # What the span model's encoder read around the mentions: a vector for every entity a paper names.
    named = [i for i, node in enumerate(vectors.nodes) if vectors.contexts[i].any()]
    assert vectors.contexts.shape == vectors.spans.shape == (len(vectors.nodes), 384)
    assert len(named) >= 0.8 * len(vectors.nodes)


def test_a_graph_without_vectors_has_none(tmp_path):
    assert graph_vectors(tmp_path / "old") is None


def with_contexts(ex: PaperExtraction, spans: list[list[float]], around: list[list[float]]) -> PaperExtraction:
    from kg.similarity import pack_contexts

    ex.contexts = pack_contexts([(m.start, m.end) for m in ex.mentions], np.array(spans), np.array(around))
    return ex


def test_an_entitys_context_vectors_pool_what_the_encoder_read_around_its_mentions():
    # GAN in two papers and VAE in one, read in alike sentences; parsing in another: after centring
    # on the mean, GAN's context is VAE's, not parsing's, and a mention with no row adds nothing.
    gan1 = with_contexts(extraction("p1", "We train a GAN.", "GAN"), [[1, 0, 0]], [[1, 1, 0]])
    gan2 = with_contexts(extraction("p2", "A GAN trained.", "GAN"), [[1, 0.2, 0]], [[1, 0.8, 0]])
    vae = with_contexts(extraction("p3", "We train a VAE.", "VAE"), [[0.9, 0.1, 0]], [[1, 0.9, 0]])
    parsing = with_contexts(extraction("p4", "We parse trees.", "parse"), [[0, 0, 1]], [[0, -1, 1]])
    found_later = extraction("p5", "GAN again.", "GAN")  # a mention added after extraction: no contexts
    entities = [Entity("gan", "Method", "GAN", [], [("p1", 0), ("p2", 0), ("p5", 0)]),
                Entity("vae", "Method", "VAE", [], [("p3", 0)]), Entity("parse", "Task", "parse", [], [("p4", 0)])]
    vectors = entity_vectors(entities, [gan1, gan2, vae, parsing, found_later])
    around, spans = vectors.similarity("method/gan", "contexts"), vectors.similarity("method/gan", "spans")
    assert around[1] > 0.5 > around[2] and spans[1] > 0.5 > spans[2]
    assert np.allclose(np.linalg.norm(vectors.contexts, axis=1), 1.0, atol=1e-3)


def test_contexts_that_do_not_read_as_written_add_nothing():
    from kg.similarity import unpack_contexts

    ex = with_contexts(extraction("p1", "We train a GAN.", "GAN"), [[1, 0, 0]], [[1, 1, 0]])
    for damaged in (ex.contexts[:-4], "not base64!", "AAAAAAAAAAA=", "/////wEAAAA=" + ex.contexts[12:]):
        assert unpack_contexts(damaged) is None
    ex.contexts = ex.contexts[:-4]
    vectors = entity_vectors([Entity("gan", "Method", "GAN", [], [("p1", 0)])], [ex])
    assert vectors.contexts is None and vectors.spans is None


def test_context_vectors_survive_saving(tmp_path, encoder):
    original = Vectors(["method/a", "task/b"], encoder.encode(["dropout", "image captioning"]),
                       np.eye(2, 3, dtype=np.float32), np.eye(2, 3, 1, dtype=np.float32))
    loaded = Vectors.load(Kept.of(original.save(tmp_path / "g.vectors.npz")))
    assert np.allclose(loaded.spans, original.spans) and np.allclose(loaded.contexts, original.contexts)
