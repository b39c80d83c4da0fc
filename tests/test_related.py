"""kg.related on a graph small enough to score by hand."""
import math

import pyoxigraph as ox
import pytest

from kg.errors import KGError
from kg.related import related

KG = "https://w3id.org/kg/ontology#"
ID = "https://w3id.org/kg/id/"
SKOS_LABEL = "http://www.w3.org/2004/02/skos/core#prefLabel"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

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


@pytest.fixture(scope="module")
def store() -> ox.Store:
    store = ox.Store()
    quads = [ox.Quad(ox.NamedNode(ID + "paper/" + p), ox.NamedNode(KG + role), ox.NamedNode(ID + e))
             for p, role, e in EDGES]
    for node in {e for _, _, e in EDGES}:
        kind, name = node.split("/")
        quads += [ox.Quad(ox.NamedNode(ID + node), ox.NamedNode(RDF_TYPE), ox.NamedNode(KG + kind.capitalize())),
                  ox.Quad(ox.NamedNode(ID + node), ox.NamedNode(SKOS_LABEL), ox.Literal(name.upper()))]
    quads.append(ox.Quad(ox.NamedNode(ID + "method/e"), ox.NamedNode(KG + "variantOf"), ox.NamedNode(ID + "method/a")))
    store.extend(quads)
    return store


def test_scores_add_up_as_worked_out_by_hand(store):
    label, found = related(store, "a")
    # N = 5 papers. T and D are each mentioned by 2 papers: idf = log(1 + 5/2) = log 3.5.
    # B: shares T and D across different papers (p1 for A, p2 for B): 2 * log 3.5;
    #    co-mentioned in p3: 1.0; p3 proposes B and compares with A: 1.0.
    # E: a variant of A: 3.0; it shares nothing else.
    # C: shares nothing (U is not A's task): left out.
    assert label == "A"
    assert [(r.label, r.score) for r in found] == [("B", round(2 * math.log(3.5) + 2, 3)), ("E", 3.0)]
    assert found[0].parts == {"tasks": round(math.log(3.5), 3), "datasets": round(math.log(3.5), 3),
                              "co-mentioned": 1.0, "compared": 1.0}
    assert found[0].reason() == "compared: in 1 paper; tasks: T; datasets: D; co-mentioned: 1 paper"
    assert found[1].reason() == "variant of A"


def test_the_variants_side_says_which_way_round(store):
    _, found = related(store, "E")
    # A: E is a variant of it (3.0); nothing shared: p5 addresses no task.
    assert [(r.label, r.score, r.reason()) for r in found] == [("A", 3.0, "E is a variant of it")]


def test_k_and_type_narrow_the_list(store):
    assert [r.label for r in related(store, "a", k=1)[1]] == ["B"]
    # Among tasks, T is mentioned with A in p1 (1.0); U never is.
    assert [(r.label, r.score) for r in related(store, "a", type="Task")[1]] == [("T", 1.0)]


def test_an_unknown_name_suggests_close_ones(store):
    with pytest.raises(KGError, match="No entity named 'AA'"):
        related(store, "AA")
