"""kg/vocab.py and ontology/kg.ttl must describe the same terms."""
from __future__ import annotations

import pyoxigraph as ox
import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SH, XSD

from kg import vocab
from kg.vocab import KG

KG_TERMS = sorted(KG.__annotations__)
DECLARATIONS = (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty)


@pytest.fixture(scope="module")
def ontology() -> Graph:
    return Graph().parse(data=vocab.ONTOLOGY_FILE.read_text(encoding="utf-8"), format="turtle")


def test_ontology_parses_with_rdflib_and_pyoxigraph(ontology):
    triples = list(ox.parse(vocab.ONTOLOGY_FILE.read_bytes(), ox.RdfFormat.TURTLE))
    assert len(triples) == len(ontology) > 0
    assert (URIRef("https://w3id.org/kg/ontology"), RDF.type, OWL.Ontology) in ontology


def test_shapes_parse():
    shapes = Graph().parse(data=vocab.SHAPES_FILE.read_text(encoding="utf-8"), format="turtle")
    assert set(shapes.subjects(RDF.type, SH.NodeShape))


@pytest.mark.parametrize("term", KG_TERMS)
def test_every_vocab_term_is_declared_with_english_label_and_comment(ontology, term):
    iri = KG[term]
    assert set(ontology.objects(iri, RDF.type)) & set(DECLARATIONS), f"{iri} is not declared"
    for prop in (RDFS.label, RDFS.comment):
        values = list(ontology.objects(iri, prop))
        assert values and all(isinstance(v, Literal) and v.language == "en" for v in values), (iri, prop)


def test_ontology_uses_no_kg_term_unknown_to_vocab(ontology):
    used = {t for triple in ontology for t in triple if isinstance(t, URIRef) and t.startswith(KG._NS)}
    assert used, "the ontology uses no kg: term at all"
    assert used <= {KG[t] for t in KG_TERMS}, used - {KG[t] for t in KG_TERMS}


def test_properties_have_domain_and_range(ontology):
    for kind in (OWL.ObjectProperty, OWL.DatatypeProperty):
        for prop in ontology.subjects(RDF.type, kind):
            assert ontology.value(prop, RDFS.domain) is not None, prop
            assert ontology.value(prop, RDFS.range) is not None, prop


def test_entity_types_are_the_subclasses_of_entity(ontology):
    assert set(ontology.subjects(RDFS.subClassOf, KG.Entity)) == {KG[t] for t in vocab.ENTITY_TYPES}


def test_roles_are_the_subproperties_of_mentions(ontology):
    assert set(ontology.subjects(RDFS.subPropertyOf, KG.mentions)) == {KG[r] for r in vocab.ROLES}
    for role in vocab.ROLES:
        assert ontology.value(KG[role], RDFS.domain) == KG.Paper
        assert ontology.value(KG[role], RDFS.range) == KG.Entity


def test_numeric_ranges(ontology):
    assert ontology.value(KG.sourceLine, RDFS.range) == XSD.integer
    assert ontology.value(KG.paperCount, RDFS.range) == XSD.integer
    assert ontology.value(KG.confidence, RDFS.range) == XSD.decimal


def test_closed_namespace_rejects_a_misspelt_term():
    with pytest.raises(AttributeError):
        KG.propose  # noqa: B018


def test_role_iri_rejects_unknown_role():
    with pytest.raises(ValueError, match="'likes'"):
        vocab.role_iri("likes")


HOSTILE_KEYS = ['a "quoted" key', "a/b\\c", '"><img onerror=alert(1)>', "line\nbreak", "🚀 émoji", "#?%&", " "]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_minted_iris_are_valid_and_deterministic(key):
    base = "https://example.org/kg/"
    iris = [vocab.entity_iri(base, "Method", key), vocab.paper_iri(base, key),
            vocab.statement_iri(base, key, "uses", key, 3), vocab.extractor_iri(base, key)]
    iris += [vocab.selector_iri(iris[2]), vocab.sentence_iri(base, key, 2), vocab.cooccurrence_iri(iris[0], "task/x")]
    for iri in iris:
        ox.NamedNode(iri)  # raises ValueError on an invalid IRI
        assert iri.startswith(base)
    assert iris[0] == vocab.entity_iri(base, "Method", key)
    assert iris[2] == vocab.statement_iri(base, key, "uses", key, 3)


def test_distinct_keys_get_distinct_iris():
    base = "https://example.org/kg/"
    assert len({vocab.entity_iri(base, "Method", k) for k in HOSTILE_KEYS}) == len(HOSTILE_KEYS)
    assert len({vocab.paper_iri(base, k) for k in HOSTILE_KEYS}) == len(HOSTILE_KEYS)


def test_selector_and_sentence_iris_are_fragments_of_their_statement_and_paper():
    statement = vocab.statement_iri("https://example.org/kg/", "p1", "uses", "bert", 0)
    assert vocab.selector_iri(statement) == URIRef(f"{statement}#pos")
    paper = vocab.paper_iri("https://example.org/kg/", "a/b")
    assert vocab.sentence_iri("https://example.org/kg/", "a/b", 3) == URIRef(f"{paper}#sentence-3")


@pytest.mark.parametrize("relation", vocab.RELATIONS)
def test_the_shapes_allow_the_entity_types_relation_types_names(relation):
    shapes = Graph().parse(data=vocab.SHAPES_FILE.read_text(encoding="utf-8"), format="turtle")
    [shape] = shapes.subjects(SH.targetSubjectsOf, KG[relation])
    subjects, objects = set(), set()
    for prop in shapes.objects(shape, SH.property):
        path = shapes.value(prop, SH.path)
        if path == RDF.type:
            subjects = {str(t).rsplit("#", 1)[1] for t in shapes.items(shapes.value(prop, SH["in"]))}
        elif path == KG[relation]:
            classes = [shapes.value(prop, SH["class"])] if shapes.value(prop, SH["class"]) else [
                shapes.value(member, SH["class"]) for member in shapes.items(shapes.value(prop, SH["or"]))]
            objects = {str(c).rsplit("#", 1)[1] for c in classes}
    assert (subjects, objects) == vocab.RELATION_TYPES[relation]
