"""kg.query.related on a graph small enough to score by hand."""
import math

import networkx as nx
import pytest

from kg.errors import KGError
from kg.query.related import WEIGHTS as W
from kg.query.related import related
from kg.query.tables import whole_tables
from kg.query.views import Tables

ID = "https://w3id.org/kg/id/"

# Five papers:                       A, B, C, E are methods; T, U tasks; D a dataset
#   p1 proposes A, addresses T, evaluates on D
#   p2 proposes B, addresses T, evaluates on D
#   p3 proposes B and compares with A
#   p4 uses C, addresses U
#   p5 proposes E, a variant of A
EDGES = [("p1", "proposes", "method/a"), ("p1", "addresses", "task/t"), ("p1", "evaluatesOn", "dataset/d"),
         ("p2", "proposes", "method/b"), ("p2", "addresses", "task/t"), ("p2", "evaluatesOn", "dataset/d"),
         ("p3", "proposes", "method/b"), ("p3", "comparesWith", "method/a"),
         ("p4", "uses", "method/c"), ("p4", "addresses", "task/u"),
         ("p5", "proposes", "method/e")]


def _tables(names: dict[str, str], edges: list[tuple[str, str, str]], links=()) -> Tables:
    """The tables of a graph of salient entities (``names``: node -> label, the type read from the node),
    the papers' role edges to them and the links between them (subject, link, object, papers stating it),
    as the build writes them."""
    G = nx.MultiDiGraph()
    for node, label in names.items():
        G.add_node(node, kind=node.split("/")[0].capitalize(), label=label, aliases=[], papers=0, salience=2.0)
    for paper in dict.fromkeys(p for p, _, _ in edges):
        G.add_node(f"paper/{paper}", kind="Paper", label=paper, title=paper, abstract="")
    for paper, role, entity in edges:
        G.add_edge(f"paper/{paper}", entity, key=role, role=role)
    for subject, link, other, papers in links:
        G.add_edge(subject, other, key=link, role=link, papers=papers)
    return Tables(whole_tables(G, base=ID))


@pytest.fixture(scope="module")
def tables() -> Tables:
    names = {node: node.split("/")[1].upper() for node in {e for _, _, e in EDGES} | {"method/g"}}
    # E varies A; G is a concept no paper names: A and C are kinds of it, so it reaches p1 and p4.
    links = [("method/e", "variantOf", "method/a", 1), ("method/a", "broader", "method/g", 1),
             ("method/c", "broader", "method/g", 1)]
    return _tables(names, EDGES, links)


def test_scores_add_up_as_worked_out_by_hand(tables):
    label, found = related(tables, "a")
    # N = 5 papers; A is in p1 and p3. Each part is a feature times its weight (W).
    # B (p2, p3): shares T and D across different papers (p1 for A, p2 for B). Each has
    #   spec = log(1 + 5/2); A's task profile (from p1, p3) is {T}, B's other papers' (p2) {T}:
    #   cosine 1; the same for datasets. Co-mentioned in p3: NPMI of 1 shared paper
    #   of 2 and 2 among 5 = log(5/4) / log(5), times log2(2) = 1. p3 proposes B and compares with A: 1.
    # E: a variant of A, in one paper: log2(2) / 4 = 0.25.
    # C: both kinds of G; spec(G) = log(1 + 5/3) (G reaches p1, p3 and p4), so 0.5 * log(8/3) / log 6.
    # G: A is a kind of it, which says less: 1/6.
    assert label == "A"
    npmi = math.log(5 / 4) / math.log(5)
    b = W["compared"] + W["co-mentioned"] * npmi + W["tasks"] + W["datasets"]
    assert [(r.label, r.score) for r in found] == [("B", round(b, 3)),
                                                   ("C", round(W["variant"] * 0.5 * math.log(8 / 3) / math.log(6), 3)),
                                                   ("E", round(W["variant"] / 4, 3)), ("G", round(W["variant"] / 6, 3))]
    assert found[0].parts == {"compared": W["compared"], "co-mentioned": round(W["co-mentioned"] * npmi, 3),
                              "tasks": W["tasks"], "datasets": W["datasets"]}
    assert found[0].reason() == "compared: in 1 paper; co-mentioned: 1 paper; tasks: T; datasets: D"
    assert found[1].reason() == "both kinds of G"
    assert found[2].reason() == "a kind or variant of A"


def test_the_variants_side_says_which_way_round(tables):
    _, found = related(tables, "E")
    # A and G above it: E is a variant of A, a kind of G (1/6 each); nothing else is shared. The tie
    # goes to the one with more papers.
    assert [(r.label, r.score, r.reason()) for r in found] == [("G", round(W["variant"] / 6, 3), "E is a kind or variant of it"),
                                                               ("A", round(W["variant"] / 6, 3), "E is a kind or variant of it")]


def test_a_concept_reaches_the_papers_of_its_narrower_entities(tables):
    label, found = related(tables, "g")
    # G's papers are A's and C's (p1, p3, p4). A (2 papers) and C (1) are kinds of it:
    # log2(3) / 4 and log2(2) / 4.
    assert label == "G"
    kinds = {r.label: (r.score, r.reason()) for r in found if r.label in "AC"}
    assert kinds == {"A": (round(W["variant"] * math.log2(3) / 4, 3), "a kind or variant of G"),
                     "C": (round(W["variant"] / 4, 3), "a kind or variant of G")}


def test_k_type_and_salience_narrow_the_list(tables):
    assert [r.label for r in related(tables, "a", k=1)[1]] == ["B"]
    # Among tasks, T is mentioned with A in p1 only (NPMI of 1 of 2 and 2 among 5 papers), and its
    # other paper (p2) evaluates on A's dataset D (cosine 1).
    assert [(r.label, r.score) for r in related(tables, "a", type="Task")[1]] == [
        ("T", round(W["datasets"] + W["co-mentioned"] * math.log(5 / 4) / math.log(5), 3))]
    assert related(tables, "a", min_salience=3)[1] == []


def test_an_unknown_name_suggests_close_ones(tables):
    with pytest.raises(KGError, match="No entity named 'AA'"):
        related(tables, "AA")


def test_similar_vectors_add_a_part_and_a_reason(tables):
    import numpy as np

    from kg.similarity import Vectors

    # A's and E's names at cosine 0.8, C's opposite: E gains (0.8 - 0.5) / 0.5 = 0.6, C nothing.
    vectors = Vectors(["method/a", "method/e", "method/c"],
                      np.array([[1.0, 0.0], [0.8, 0.6], [-1.0, 0.0]], dtype=np.float32))
    found = {r.label: r for r in related(tables, "a", vectors=vectors)[1]}
    assert found["E"].parts == {"variant": round(W["variant"] / 4, 3), "similar": round(W["similar"] * 0.6, 3)}
    assert found["E"].reason() == "a kind or variant of A; similar: 0.80"
    assert "similar" not in found["C"].parts


def test_what_the_encoder_read_adds_a_context_part_and_grounds_an_answer(tables):
    import numpy as np

    from kg.similarity import Vectors

    # E read alike to A (cosines 0.6 around its mentions and 0.8 in them): a context part of
    # W * 0.8 + W * 0.6, shown as one part. C shares nothing with A but a concept; read alike
    # too (0.6 around), it gains the same context part. Read unlike (0.2), B gains nothing from it.
    names = np.eye(4, 2, dtype=np.float32)
    spans = np.array([[1, 0], [0.8, 0.6], [1, 0], [-1, 0]], dtype=np.float32)
    around = np.array([[1, 0], [0.6, 0.8], [0.6, 0.8], [0.2, 0.98]], dtype=np.float32)
    vectors = Vectors(["method/a", "method/e", "method/c", "method/b"], names, spans, around)
    found = {r.label: r for r in related(tables, "a", vectors=vectors)[1]}
    assert found["E"].parts["context"] == round(W["spans"] * 0.8 + W["contexts"] * 0.6, 3)
    assert found["E"].reason().endswith("context: 0.60 around it, 0.80 itself")
    assert found["C"].parts["context"] == round(W["spans"] + W["contexts"] * 0.6, 3)
    assert found["B"].parts["context"] == round(W["contexts"] * 0.2, 3)


def test_names_a_sentence_lists_together_are_related_and_say_so():
    from kg.query.related import RelatedIndex

    # p1 lists GAN with VAE ("GANs, VAEs and flows") and p2 again; XNet is in p1 too but not in the list.
    # Listed in two papers: log2(3), beside what they share.
    names = {"method/gan": "GAN", "method/vae": "VAE", "method/x": "XNet"}
    edges = [("p1", "uses", "method/gan"), ("p1", "uses", "method/vae"), ("p1", "uses", "method/x"),
             ("p2", "uses", "method/gan"), ("p2", "uses", "method/vae"), ("p3", "uses", "method/x")]
    tables = _tables(names, edges, [("method/gan", "listedWith", "method/vae", 2)])
    found = {r.label: r for r in RelatedIndex(tables).related("GAN")[1]}
    assert found["VAE"].parts["listed"] == round(W["listed"] * math.log2(3), 3)
    assert found["VAE"].reason().startswith("listed: in 2 papers")
    assert all("listed" not in r.parts for label, r in found.items() if label != "VAE")
    # Either way round: the relation has no direction.
    assert {r.label: r for r in RelatedIndex(tables).related("VAE")[1]}["GAN"].parts["listed"] == found["VAE"].parts["listed"]


def test_variants_of_the_name_are_ranked_with_the_rest_as_kinds_of_it():
    from kg.query.related import RelatedIndex

    # p1 and p2 use GAN with VAE; p2 proposes Wasserstein GAN and p3 self-attention GAN: both are
    # GAN with words added, kinds of GAN by their names, each in one paper: log2(2) / 4 = 0.25
    # for the variant, beside what they share. (p4 and p5 use XNet alone.)
    names = {"method/gan": "GAN", "method/wgan": "Wasserstein GAN", "method/sagan": "self-attention GAN",
             "method/vae": "VAE", "method/x": "XNet"}
    edges = [("p1", "uses", "method/gan"), ("p1", "uses", "method/vae"), ("p2", "uses", "method/gan"),
             ("p2", "uses", "method/vae"), ("p2", "proposes", "method/wgan"), ("p3", "proposes", "method/sagan"),
             ("p3", "uses", "method/gan"), ("p4", "uses", "method/x"), ("p5", "uses", "method/x")]
    index = RelatedIndex(_tables(names, edges))
    found = {r.label: r for r in index.related("GAN")[1]}
    assert set(found) == {"VAE", "Wasserstein GAN", "self-attention GAN"}
    assert found["Wasserstein GAN"].parts["variant"] == round(W["variant"] / 4, 3) and found["Wasserstein GAN"].reason().startswith(
        "a kind or variant of GAN")
    assert index.variants("GAN") == [("self-attention GAN", 1), ("Wasserstein GAN", 1)]  # most papers, then A-Z
    # What the list ranks is not listed again after it; what it has no room for is.
    assert index.answer("GAN").variants == []
    [top] = index.related("GAN", k=2)[1][:1]
    assert index.answer("GAN", k=2).variants == [v for v in index.variants("GAN") if v[0] not in
                                                 {r.label for r in index.related("GAN", k=2)[1]}]
    assert top.label in found


def test_a_category_of_methods_is_no_related_method():
    from kg.query.related import is_category

    # Plain phrases ending in a word for a class of methods are categories; names and methods are not.
    assert [is_category(label) for label in ("model-free algorithms", "value functions", "deep reinforcement learning agent",
                                             "weight decay", "TRPO", "Prototypical Networks", "batch normalization",
                                             "discriminator", "dropout")] == [
        True, True, True, False, False, False, False, True, False]


def test_in_a_large_corpus_an_established_method_outranks_a_one_paper_variant():
    from kg.query.related import RelatedIndex

    # 207 papers: GAN in p1-p4; StyleGAN in p1, p2 and three more; "Wasserstein GAN" proposed in p4
    # alone, compared with GAN there; 200 others use filler methods. Unscaled, the one-paper variant
    # (variant 0.75 + compared 1.0) would beat StyleGAN (co-mentioned 1.03); but one paper is 0.39 of
    # established (5 papers): 1.75 x 0.39 = 0.68.
    names = {"method/gan": "GAN", "method/stylegan": "StyleGAN", "method/wgan": "Wasserstein GAN"}
    edges = [(f"p{i}", "uses", "method/gan") for i in (1, 2, 3, 4)]
    edges += [(f"p{i}", "uses", "method/stylegan") for i in (1, 2, 5, 6, 7)] + [("p4", "proposes", "method/wgan"),
                                                                               ("p4", "comparesWith", "method/gan")]
    for i in range(8, 208):
        names[f"method/f{i}"] = f"Filler{i}"
        edges.append((f"p{i}", "uses", f"method/f{i}"))
    found = [r.label for r in RelatedIndex(_tables(names, edges)).related("GAN")[1]]
    assert found == ["StyleGAN", "Wasserstein GAN"]
    # On a reading list (fewer than 200 papers) every paper's method counts in full.
    small = {n: label for n, label in names.items() if not label.startswith("Filler")}
    few = [e for e in edges if not e[2].startswith("method/f")]
    assert [r.label for r in RelatedIndex(_tables(small, few)).related("GAN")[1]][0] == "Wasserstein GAN"


def test_the_tables_a_build_writes_answer_as_its_store_does(sample, tables):
    """``kg related`` reads the tables ``kg build`` keeps beside the graph; read from them, every answer
    is the one the tables made of its store give."""
    from kg.query.graph_index import store_tables
    from kg.query.related import RelatedIndex, RelatedTables
    from kg.query.views import kept_tables
    from kg.similarity import graph_vectors
    from kg.store import open_graph

    kept = kept_tables(sample)
    assert kept is not None
    from_file, from_store = RelatedIndex(kept), RelatedIndex(store_tables(open_graph(sample)))
    assert from_file.rows == from_store.rows and from_file.n_papers == from_store.n_papers > 0
    vectors = graph_vectors(sample)
    for iri in from_store.rows:
        for kind in ("Method", "Task"):
            assert from_file.answer(iri, type=kind, vectors=vectors).as_json() == \
                from_store.answer(iri, type=kind, vectors=vectors).as_json()
    # The hand-worked graph of this module: its entities and links.
    hand = RelatedTables.of(tables)
    assert hand.entities == sorted(ID + e for e in {e for _, _, e in EDGES} | {"method/g"}) and hand.papers == 5
    assert hand.variants.tolist() == [[hand.entities.index(ID + "method/e"), hand.entities.index(ID + "method/a")]]
