"""kg.write.triples and its writers: export, validation and atomic writing, on tiny hand-made graphs."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import networkx as nx
import pyoxigraph as ox
import pytest
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SKOS, XSD

from kg.write import serialize
from kg import vocab
from kg.link.concepts import annotate
from kg.link.graph import build_graph
from kg.model import Entity, Mention, Paper, PaperExtraction, Source
from kg.write.triples import export_blocks, sorted_pairs
from kg.write.jsonld import JsonLd
from kg.write.shapes import to_rdf, validate
from kg.write.serialize import to_triples, write_rdf
from kg.vocab import KG, OA, SCHEMA

BASE = "https://example.org/kg/"
ABSTRACT = "We propose GRPO for math reasoning. We evaluate GRPO on GSM8K and report accuracy."


def _span(text: str, needle: str, after: int = 0) -> tuple[int, int]:
    start = text.index(needle, after)
    return start, start + len(needle)


def _sentences(text: str) -> list[tuple[int, int]]:
    first_end = text.index(". ") + 1
    return [(0, first_end), (first_end + 1, len(text))]


def _small_graph():
    """One paper; GRPO proposed (twice: two evidence items), GSM8K evaluated on, accuracy measured."""
    s1 = ABSTRACT.index("We evaluate")
    spans = [_span(ABSTRACT, "GRPO"), _span(ABSTRACT, "GRPO", s1), _span(ABSTRACT, "GSM8K"),
             _span(ABSTRACT, "accuracy")]
    mentions = [Mention(*spans[0], "GRPO", "Method", 0, 0.9, "rules/1", role="proposes", role_confidence=0.9),
                Mention(*spans[1], "GRPO", "Method", 1, 0.6, "rules/1", role="proposes", role_confidence=0.87654),
                Mention(*spans[2], "GSM8K", "Dataset", 1, 0.8, "rules/1", role="evaluatesOn", role_confidence=0.8),
                Mention(*spans[3], "accuracy", "Metric", 1, 0.7, "ner", role="measures", role_confidence=0.7)]
    paper = Paper("p1", ABSTRACT, title="GRPO", venue="arXiv", year=2024, authors=["Ada", "Alan"],
                  keywords=["RL"], url="https://example.org/p1", source=Source("in.jsonl", 3))
    ex = PaperExtraction(paper, _sentences(ABSTRACT), mentions, {})
    entities = [Entity("GRPO", "Method", "GRPO", ["group relative policy optimization"], [("p1", 0), ("p1", 1)]),
                Entity("gsm8k", "Dataset", "GSM8K", [], [("p1", 2)]),
                Entity("accuracy", "Metric", "accuracy", [], [("p1", 3)])]
    return build_graph([ex], entities, annotations=annotate(entities, [], [ex]))  # salience and reach, as a build's


@pytest.fixture
def exported() -> Graph:
    return to_rdf(_small_graph(), base=BASE)


def _the(rdf: Graph, cls: URIRef) -> URIRef:
    """The one node of class ``cls``."""
    nodes = list(rdf.subjects(RDF.type, cls))
    assert len(nodes) == 1, nodes
    return nodes[0]


# ------------------------------------------------------------------ export


def test_export_by_hand(exported):
    paper = vocab.paper_iri(BASE, "p1")
    grpo = vocab.entity_iri(BASE, "Method", "GRPO")
    # 3 role edges; GRPO has two evidence items, so 4 statements.
    assert set(exported.predicate_objects(paper)) >= {
        (KG.proposes, grpo),
        (KG.evaluatesOn, vocab.entity_iri(BASE, "Dataset", "gsm8k")),
        (KG.measures, vocab.entity_iri(BASE, "Metric", "accuracy")),
        (DCTERMS.identifier, Literal("p1")), (DCTERMS.abstract, Literal(ABSTRACT)),
        (DCTERMS.title, Literal("GRPO")), (KG.venue, Literal("arXiv")),
        (DCTERMS.issued, Literal("2024", datatype=XSD.gYear)),
        (DCTERMS.creator, Literal("Ada")), (DCTERMS.creator, Literal("Alan")),
        (SCHEMA.keywords, Literal("RL")), (SCHEMA.url, URIRef("https://example.org/p1")),
        (KG.sourceFile, Literal("in.jsonl")), (KG.sourceLine, Literal(3)), (RDFS.label, Literal("GRPO")),
    }
    assert len(set(exported.subjects(RDF.type, KG.Statement))) == 4
    assert set(exported.predicate_objects(grpo)) == {
        (RDF.type, KG.Method), (SKOS.prefLabel, Literal("GRPO")),
        (SKOS.altLabel, Literal("group relative policy optimization")), (KG.paperCount, Literal(1)),
        (KG.lookupKey, Literal("grpo")), (KG.lookupKey, Literal("group relative policy optimization")),
        (KG.paperCountWithNarrower, Literal(1)), (KG.salience, Literal("2.5", datatype=XSD.decimal)),
        (KG.cooccurrence, vocab.cooccurrence_iri(grpo, "dataset/gsm8k")),
    }
    assert set(exported.predicate_objects(vocab.cooccurrence_iri(grpo, "dataset/gsm8k"))) == {
        (KG.cooccursWith, vocab.entity_iri(BASE, "Dataset", "gsm8k")), (KG.paperCount, Literal(1)),
        (KG.proposerCount, Literal(1))}  # the paper proposes GRPO and evaluates on GSM8K


def test_statement_shape(exported):
    start = ABSTRACT.index("GRPO", ABSTRACT.index("We evaluate"))
    statement = vocab.statement_iri(BASE, "p1", "proposes", "GRPO", start)
    position, sentence = vocab.selector_iri(statement), vocab.sentence_iri(BASE, "p1", 1)
    extractor = vocab.extractor_iri(BASE, "rules/1")
    assert set(exported.predicate_objects(statement)) == {
        (RDF.type, KG.Statement),
        (RDF.subject, vocab.paper_iri(BASE, "p1")), (RDF.predicate, KG.proposes),
        (RDF.object, vocab.entity_iri(BASE, "Method", "GRPO")),
        (KG.confidence, Literal("0.877", datatype=XSD.decimal)),  # 0.87654 rounded to 3 places
        (PROV.wasDerivedFrom, sentence), (PROV.wasAttributedTo, extractor), (OA.hasSelector, position),
    }
    assert set(exported.predicate_objects(position)) == {
        (RDF.type, OA.TextPositionSelector),
        (OA.start, Literal(start, datatype=XSD.nonNegativeInteger)),
        (OA.end, Literal(start + 4, datatype=XSD.nonNegativeInteger)),
    }
    # The sentence is stored once; the quote is what the position selects from the abstract.
    text = "We evaluate GRPO on GSM8K and report accuracy."
    assert set(exported.predicate_objects(sentence)) == {
        (RDF.type, KG.Sentence), (RDF.value, Literal(text)), (DCTERMS.isPartOf, vocab.paper_iri(BASE, "p1")),
        (OA.start, Literal(ABSTRACT.index(text), datatype=XSD.nonNegativeInteger)),
        (OA.end, Literal(ABSTRACT.index(text) + len(text), datatype=XSD.nonNegativeInteger)),
    }
    assert ABSTRACT[start:start + 4] == "GRPO"
    assert len(set(exported.subjects(RDF.type, KG.Sentence))) == len(set(exported.objects(None, PROV.wasDerivedFrom)))
    assert set(exported.predicate_objects(extractor)) == {
        (RDF.type, KG.Extractor), (RDFS.label, Literal("rules/1")), (KG.version, Literal("1"))}


def test_export_has_no_blank_nodes_and_binds_our_prefixes(exported):
    assert not [t for triple in exported for t in triple if isinstance(t, BNode)]
    bound = dict(exported.namespaces())
    assert all(bound[prefix] == URIRef(ns) for prefix, ns in vocab.NAMESPACES.items())


def test_repeated_evidence_for_one_span_becomes_one_statement_with_the_best_confidence():
    ex = PaperExtraction(Paper("p1", "We use BERT."), [(0, 12)],
                         [Mention(7, 11, "BERT", "Model", 0, 0.9, "ner", role="uses", role_confidence=0.4),
                          Mention(7, 11, "BERT", "Model", 0, 0.9, "ner", role="uses", role_confidence=0.8)], {})
    rdf = to_rdf(build_graph([ex], [Entity("BERT", "Model", "BERT", [], [("p1", 0), ("p1", 1)])]), base=BASE)
    statement = _the(rdf, KG.Statement)
    assert list(rdf.objects(statement, KG.confidence)) == [Literal("0.800", datatype=XSD.decimal)]
    assert validate(rdf)[0]


def test_optional_paper_fields_are_left_out_when_empty():
    ex = PaperExtraction(Paper("p1", "We use BERT."), [(0, 12)],
                         [Mention(7, 11, "BERT", "Model", 0, 0.9, "ner", role="uses", role_confidence=0.8)], {})
    rdf = to_rdf(build_graph([ex], [Entity("BERT", "Model", "BERT", [], [("p1", 0)])]), base=BASE)
    paper = vocab.paper_iri(BASE, "p1")
    absent = (DCTERMS.title, KG.venue, DCTERMS.date, DCTERMS.creator, SCHEMA.keywords, SCHEMA.url,
              KG.sourceFile, KG.sourceLine)
    assert not [p for p in absent if (paper, p, None) in rdf]
    assert validate(rdf)[0]


@pytest.mark.parametrize("url, expected", [
    ("https://example.org/a b\"<c>", URIRef("https://example.org/a%20b%22%3Cc%3E")),
    ("not a url", None),
    ("", None),
])
def test_paper_url_is_made_a_valid_iri_or_dropped(url, expected):
    ex = PaperExtraction(Paper("p1", "x", url=url), [(0, 1)], [], {})
    rdf = to_rdf(build_graph([ex], []), base=BASE)
    assert rdf.value(vocab.paper_iri(BASE, "p1"), SCHEMA.url) == expected


def test_unknown_node_kind_is_an_error_naming_the_node():
    G = _small_graph()
    G.add_node("thing/x", kind="Thing", label="x", key="x")
    with pytest.raises(ValueError, match="'thing/x' has kind 'Thing'"):
        to_rdf(G)


# -------------------------------------------------------------- validation


def test_export_validates_without_being_modified(exported):
    before = set(exported)
    conforms, report = validate(exported)
    assert conforms, report
    assert set(exported) == before


def _paper(rdf):
    return _the(rdf, KG.Paper)


def _statement(rdf):
    return sorted(rdf.subjects(RDF.type, KG.Statement))[0]


def _position(rdf):
    return vocab.selector_iri(_statement(rdf))


def _sentence(rdf):
    return rdf.value(_statement(rdf), PROV.wasDerivedFrom)


def _add_orphan_task(rdf):
    task = vocab.entity_iri(BASE, "Task", "orphan")
    for p, o in ((RDF.type, KG.Task), (SKOS.prefLabel, Literal("orphan")), (KG.lookupKey, Literal("orphan")),
                 (KG.paperCount, Literal(1))):
        rdf.add((task, p, o))


BROKEN = {
    "paper without abstract": (lambda g: g.remove((_paper(g), DCTERMS.abstract, None)), "dcterms:abstract"),
    "paper with two abstracts": (lambda g: g.add((_paper(g), DCTERMS.abstract, Literal("again"))),
                                 "dcterms:abstract"),
    "paper without identifier": (lambda g: g.remove((_paper(g), DCTERMS.identifier, None)), "dcterms:identifier"),
    "paper with two titles": (lambda g: g.add((_paper(g), DCTERMS.title, Literal("Other"))), "dcterms:title"),
    "abstract not a string": (lambda g: g.set((_paper(g), DCTERMS.abstract, Literal(3))), "dcterms:abstract"),
    "end before start": (lambda g: g.set((_position(g), OA.end, Literal(0, datatype=XSD.nonNegativeInteger))),
                         "oa:start"),
    "end equal to start": (lambda g: g.set((_position(g), OA.end, g.value(_position(g), OA.start))), "oa:start"),
    "negative start": (lambda g: g.set((_position(g), OA.start, Literal(-1))), "oa:start"),
    "negative nonNegativeInteger start": (
        lambda g: g.set((_position(g), OA.start, Literal("-1", datatype=XSD.nonNegativeInteger))), "oa:start"),
    "start not an integer": (lambda g: g.set((_position(g), OA.start, Literal("3"))), "oa:start"),
    "confidence 1.5": (lambda g: g.set((_statement(g), KG.confidence, Literal("1.5", datatype=XSD.decimal))),
                       "kg:confidence"),
    "negative confidence": (lambda g: g.set((_statement(g), KG.confidence, Literal("-0.1", datatype=XSD.decimal))),
                            "kg:confidence"),
    "confidence as a string": (lambda g: g.set((_statement(g), KG.confidence, Literal("0.5"))), "kg:confidence"),
    "statement without confidence": (lambda g: g.remove((_statement(g), KG.confidence, None)), "kg:confidence"),
    "statement without sentence": (lambda g: g.remove((_statement(g), PROV.wasDerivedFrom, None)),
                                   "derived from exactly one kg:Sentence"),
    "sentence without text": (lambda g: g.remove((_sentence(g), RDF.value, None)), "rdf:value"),
    "sentence of no paper": (lambda g: g.remove((_sentence(g), DCTERMS.isPartOf, None)), "dcterms:isPartOf"),
    "statement without position selector": (lambda g: g.remove((_statement(g), OA.hasSelector, _position(g))),
                                            "TextPositionSelector"),
    "statement predicate not a role": (lambda g: g.set((_statement(g), RDF.predicate, RDFS.seeAlso)),
                                       "either a paper's role"),
    "statement about a non-paper": (lambda g: g.set((_statement(g), RDF.subject, URIRef(BASE + "nothing"))),
                                    "either a paper's role"),
    "statement derived from another node": (
        lambda g: g.set((_statement(g), PROV.wasDerivedFrom, URIRef(BASE + "nothing"))), "kg:Sentence"),
    "statement read in another paper's sentence": (
        lambda g: g.set((_sentence(g), DCTERMS.isPartOf, URIRef(BASE + "paper/other"))), "either a paper's role"),
    "statement without extractor": (lambda g: g.remove((_statement(g), PROV.wasAttributedTo, None)),
                                    "prov:wasAttributedTo"),
    "statement edge not asserted": (
        lambda g: g.remove((_paper(g), KG.measures, None)), "is not asserted"),
    "role edge to a non-entity": (lambda g: g.add((_paper(g), KG.uses, URIRef(BASE + "nothing"))),
                                  "must be a kg:Task"),
    "role edge to a paper": (lambda g: g.add((_paper(g), KG.comparesWith, _paper(g))), "must be a kg:Task"),
    "role edge from an entity": (
        lambda g: g.add((vocab.entity_iri(BASE, "Metric", "accuracy"), KG.uses,
                         vocab.entity_iri(BASE, "Method", "GRPO"))), "Only a kg:Paper"),
    "entity without prefLabel": (
        lambda g: g.remove((vocab.entity_iri(BASE, "Method", "GRPO"), SKOS.prefLabel, None)), "skos:prefLabel"),
    "entity with two prefLabels": (
        lambda g: g.add((vocab.entity_iri(BASE, "Method", "GRPO"), SKOS.prefLabel, Literal("G"))), "skos:prefLabel"),
    "entity reaching no paper": (
        lambda g: g.set((vocab.entity_iri(BASE, "Method", "GRPO"), KG.paperCountWithNarrower, Literal(0))),
        "kg:paperCountWithNarrower"),
    "broader link to a paper": (
        lambda g: g.add((vocab.entity_iri(BASE, "Method", "GRPO"), SKOS.broader, vocab.paper_iri(BASE, "p1"))),
        "skos:broader"),
    "entity without paperCount": (
        lambda g: g.remove((vocab.entity_iri(BASE, "Method", "GRPO"), KG.paperCount, None)), "kg:paperCount"),
    "entity no paper mentions": (_add_orphan_task, "role edge from a kg:Paper, or a concept"),
    "entity without lookup key": (
        lambda g: g.remove((vocab.entity_iri(BASE, "Method", "GRPO"), KG.lookupKey, None)), "kg:lookupKey"),
    "co-occurrence without count": (
        lambda g: g.remove((vocab.cooccurrence_iri(vocab.entity_iri(BASE, "Method", "GRPO"), "dataset/gsm8k"),
                            KG.paperCount, None)), "kg:paperCount"),
}


@pytest.mark.parametrize("breakage", BROKEN, ids=list(BROKEN))
def test_broken_export_fails_validation(exported, breakage):
    breakage_fn, expected = BROKEN[breakage]
    breakage_fn(exported)
    conforms, report = validate(exported)
    assert not conforms
    assert expected in report, report


# ------------------------------------------------------------------ files


def _ox_triples(path, fmt) -> set:
    return {(q.subject, q.predicate, q.object) for q in ox.parse(path=path, format=fmt)}


FORMATS = {"ttl": ("turtle", ox.RdfFormat.TURTLE), "nt": ("nt", ox.RdfFormat.N_TRIPLES),
           "jsonld": ("json-ld", ox.RdfFormat.JSON_LD)}


def _assert_files_hold(paths, rdf: Graph, triples: set):
    """Each file parses, with rdflib and with pyoxigraph, to exactly the triples of ``rdf`` and ``triples``."""
    expected = {(t.subject, t.predicate, t.object) for t in triples}
    for ext, (rdflib_format, ox_format) in FORMATS.items():
        assert set(Graph().parse(paths[ext], format=rdflib_format)) == set(rdf), ext
        assert _ox_triples(paths[ext], ox_format) == expected, ext
    lines = paths["nt"].read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(set(lines)) == len(rdf)  # no triple written twice


def test_written_files_parse_back_to_the_same_triples(tmp_path, exported):
    paths = write_rdf(exported, tmp_path / "out" / "kg")
    assert {ext: p.name for ext, p in paths.items()} == {"ttl": "kg.ttl", "nt": "kg.nt", "jsonld": "kg.jsonld"}
    by_oxigraph = {}
    for ext, (rdflib_format, ox_format) in FORMATS.items():
        parsed = Graph().parse(paths[ext], format=rdflib_format)
        assert len(parsed) == len(exported)
        assert set(parsed) == set(exported), ext
        by_oxigraph[ext] = _ox_triples(paths[ext], ox_format)
        assert len(by_oxigraph[ext]) == len(exported), ext
    assert by_oxigraph["ttl"] == by_oxigraph["nt"] == by_oxigraph["jsonld"]
    store = ox.Store()
    store.load(path=paths["nt"], format=ox.RdfFormat.N_TRIPLES)
    assert len(store) == len(exported)
    assert not [p for p in paths["nt"].parent.iterdir() if p.name.startswith(".")]  # no temp files left


def test_to_triples_and_to_rdf_are_the_same_triples(exported):
    triples = list(to_triples(_small_graph(), base=BASE))
    assert len(triples) == len(set(triples)) == len(exported)
    by_rdflib = ox.parse(exported.serialize(format="nt", encoding="utf-8"), format=ox.RdfFormat.N_TRIPLES)
    assert set(triples) == {ox.Triple(q.subject, q.predicate, q.object) for q in by_rdflib}


def test_write_rdf_exports_a_networkx_graph_itself(tmp_path, exported):
    G = _small_graph()
    from_networkx = write_rdf(G, tmp_path / "a", base=BASE)
    # The files hold the graph; the index beside them, the rest of what to_triples gives.
    index = _ox_triples(from_networkx["index"], ox.RdfFormat.N_TRIPLES)
    everything = {(t.subject, t.predicate, t.object) for t in to_triples(G, base=BASE)}
    assert index and index < everything
    for ext, (_, ox_format) in FORMATS.items():
        assert _ox_triples(from_networkx[ext], ox_format) == everything - index, ext
    from_rdflib = write_rdf(exported, tmp_path / "b")
    _assert_files_hold(from_rdflib, exported, set(to_triples(G, base=BASE)))


def test_each_subject_comes_once_with_its_triples_sorted():
    blocks = list(export_blocks(_small_graph(), BASE))
    subjects = [subject for subject, _ in blocks]
    assert len(subjects) == len(set(subjects))
    for subject, pairs in blocks:  # statements are built in this order rather than sorted
        assert pairs == sorted_pairs(pairs), subject
    papers = [s for s in subjects if s.startswith(BASE + "paper/")]
    assert subjects[0] == papers[0] and subjects[-1] == str(vocab.extractor_iri(BASE, "rules/1"))


def test_files_do_not_depend_on_the_chunk_size(tmp_path, monkeypatch):
    whole = write_rdf(_small_graph(), tmp_path / "whole", base=BASE)
    monkeypatch.setattr(serialize, "_CHUNK", 1)  # one subject per pyoxigraph call
    chunked = write_rdf(_small_graph(), tmp_path / "chunked", base=BASE)
    for ext in whole:
        assert whole[ext].read_bytes() == chunked[ext].read_bytes(), ext
    assert whole["ttl"].read_text(encoding="utf-8").count("@prefix kg:") == 1


def test_jsonld_is_compacted_with_our_prefixes(tmp_path):
    document = json.loads(write_rdf(_small_graph(), tmp_path / "kg", base=BASE)["jsonld"].read_text(encoding="utf-8"))
    assert document["@context"] == {prefix: str(ns) for prefix, ns in vocab.NAMESPACES.items()}
    nodes = {node["@id"]: node for node in document["@graph"]}
    paper = nodes[str(vocab.paper_iri(BASE, "p1"))]
    assert paper["@type"] == "kg:Paper"
    assert paper["kg:proposes"] == {"@id": str(vocab.entity_iri(BASE, "Method", "GRPO"))}
    assert paper["dcterms:issued"] == {"@value": "2024", "@type": "xsd:gYear"}
    assert paper["dcterms:creator"] == ["Ada", "Alan"]


@pytest.mark.parametrize("url", ["schema:foo", "kg:Paper", "xsd:string", "rdf:type?x=1"])
def test_jsonld_keeps_an_iri_that_looks_like_a_compact_iri(tmp_path, url):
    # "schema:foo" is an absolute IRI (scheme "schema"), but compacted JSON-LD
    # with a "schema" prefix would read it as https://schema.org/foo.
    ex = PaperExtraction(Paper("p1", "We use BERT.", url=url), [(0, 12)],
                         [Mention(7, 11, "BERT", "Model", 0, 0.9, "ner", role="uses", role_confidence=0.8)], {})
    G = build_graph([ex], [Entity("BERT", "Model", "BERT", [], [("p1", 0)])])
    rdf = to_rdf(G, base=BASE)
    assert rdf.value(vocab.paper_iri(BASE, "p1"), SCHEMA.url) == URIRef(url)
    _assert_files_hold(write_rdf(G, tmp_path / "kg", base=BASE), rdf, set(to_triples(G, base=BASE)))


def test_rdflib_graphs_with_blank_nodes_and_language_tags_round_trip(tmp_path):
    rdf = Graph()
    s, b = URIRef("https://example.org/s"), BNode("b0")
    for triple in ((s, RDFS.label, Literal("chat", lang="fr")), (s, RDFS.seeAlso, b), (b, RDF.type, KG.Paper),
                   (b, RDF.type, b), (s, KG.sourceLine, Literal(3)), (s, RDFS.label, Literal("kg:x")),
                   (URIRef("schema:x"), RDFS.label, Literal("misread?"))):
        rdf.add(triple)
    paths = write_rdf(rdf, tmp_path / "kg")
    for ext, (rdflib_format, _) in FORMATS.items():
        assert len(Graph().parse(paths[ext], format=rdflib_format)) == len(rdf)
        assert Graph().parse(paths[ext], format=rdflib_format).isomorphic(rdf), ext


def test_same_iri_from_two_nodes_is_one_subject(tmp_path):
    # Entity keys "a b" and "a-b" both mint .../method/a-b; the paper lists an author twice.
    ex = PaperExtraction(Paper("p1", "We use a b and a-b.", authors=["Ada", "Ada"]), [(0, 19)],
                         [Mention(7, 10, "a b", "Method", 0, 0.9, "ner", role="uses", role_confidence=0.8),
                          Mention(15, 18, "a-b", "Method", 0, 0.9, "ner", role="uses", role_confidence=0.7)], {})
    G = build_graph([ex], [Entity("a b", "Method", "a b", [], [("p1", 0)]),
                           Entity("a-b", "Method", "a-b", [], [("p1", 1)])])
    rdf = to_rdf(G, base=BASE)
    paths = write_rdf(G, tmp_path / "kg", base=BASE)
    _assert_files_hold(paths, rdf, set(to_triples(G, base=BASE)))
    subjects = [subject for subject, _ in export_blocks(G, BASE)]
    assert len(subjects) == len(set(subjects))


def test_an_empty_graph_writes_files_that_parse(tmp_path):
    paths = write_rdf(nx.MultiDiGraph(), tmp_path / "kg")
    for ext, (rdflib_format, ox_format) in FORMATS.items():
        assert len(Graph().parse(paths[ext], format=rdflib_format)) == 0
        assert not _ox_triples(paths[ext], ox_format)


@pytest.mark.parametrize("breakage, message", [
    (lambda G: G.add_edge("method/GRPO", "dataset/gsm8k", key="uses"), "starts at an entity; only relations"),
    (lambda G: G.add_edge("paper/p1", "paper/p1", key="uses"), "links two papers"),
    (lambda G: G.add_edge("paper/p1", "method/GRPO", key="likes", evidence=[]), "Unknown role 'likes'"),
])
def test_edges_that_are_not_paper_role_entity_are_errors_before_any_file_is_written(tmp_path, breakage, message):
    G = _small_graph()
    breakage(G)
    with pytest.raises(ValueError, match=message):
        write_rdf(G, tmp_path / "kg")
    assert not list(tmp_path.iterdir())


HOSTILE = ['say "hi"', '"><img src=x onerror=alert(1)>', "<script>alert('x')</script>", "line\nbreak\r\nand\ttab",
           "🚀 émoji ∑", "a/b\\c\\\\d", '"""triple"""', "trailing backslash\\", "#frag?q=1&x=%20"]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_strings_round_trip_exactly(tmp_path, hostile):
    abstract = f"We propose {hostile} now.\n{hostile}"
    start, end = _span(abstract, hostile)
    ex = PaperExtraction(
        Paper(hostile, abstract, title=hostile, venue=hostile, authors=[hostile], keywords=[hostile],
              url=f"https://example.org/{hostile}", source=Source(hostile, 1)),
        [(0, len(abstract))],
        [Mention(start, end, hostile, "Method", 0, 0.5, hostile, role="proposes", role_confidence=0.5)], {})
    G = build_graph([ex], [Entity(hostile, "Method", hostile, [hostile + "!"], [(hostile, 0)])])
    rdf = to_rdf(G, base=BASE)
    conforms, report = validate(rdf)
    assert conforms, report
    _assert_files_hold(write_rdf(G, tmp_path / "from-networkx", base=BASE), rdf, set(to_triples(G, base=BASE)))
    paths = write_rdf(rdf, tmp_path / "kg")
    _assert_files_hold(paths, rdf, set(to_triples(G, base=BASE)))
    for ext, fmt in (("ttl", "turtle"), ("nt", "nt"), ("jsonld", "json-ld")):
        parsed = Graph().parse(paths[ext], format=fmt)
        assert set(parsed) == set(rdf), ext
        paper, entity = vocab.paper_iri(BASE, hostile), vocab.entity_iri(BASE, "Method", hostile)
        assert str(parsed.value(paper, DCTERMS.abstract)) == abstract
        assert str(parsed.value(paper, DCTERMS.identifier)) == hostile
        assert str(parsed.value(entity, SKOS.prefLabel)) == hostile
        assert str(parsed.value(entity, SKOS.altLabel)) == hostile + "!"
    for ext, fmt in (("ttl", ox.RdfFormat.TURTLE), ("nt", ox.RdfFormat.N_TRIPLES), ("jsonld", ox.RdfFormat.JSON_LD)):
        triples = _ox_triples(paths[ext], fmt)
        assert len(triples) == len(rdf), ext
        assert ox.Literal(abstract) in {o for _, _, o in triples}


def test_iris_and_files_are_deterministic(tmp_path):
    first, second = to_rdf(_small_graph(), base=BASE), to_rdf(_small_graph(), base=BASE)
    assert set(first) == set(second)
    a, b = write_rdf(first, tmp_path / "a"), write_rdf(second, tmp_path / "b")
    c, d = write_rdf(_small_graph(), tmp_path / "c", base=BASE), write_rdf(_small_graph(), tmp_path / "d", base=BASE)
    for ext in ("ttl", "nt", "jsonld"):
        assert a[ext].read_bytes() == b[ext].read_bytes(), ext
        assert c[ext].read_bytes() == d[ext].read_bytes(), ext


def test_files_from_a_networkx_graph_do_not_depend_on_the_hash_seed(tmp_path):
    # Set and dict orders must not leak into the files (tests/test_cli.py checks whole builds).
    G = _small_graph()
    G.add_node("method/other", kind="Method", label="other", aliases=["b", "a"], key="other", papers=1)
    evidence = G.edges["paper/p1", "method/GRPO", "proposes"]["evidence"]
    G.add_edge("paper/p1", "method/other", key="uses", evidence=evidence)
    (tmp_path / "g.pickle").write_bytes(pickle.dumps(G))
    script = ("import pickle, sys; from pathlib import Path; from kg.write.serialize import write_rdf; "
              "write_rdf(pickle.loads(Path(sys.argv[1]).read_bytes()), Path(sys.argv[2]))")
    for seed in ("1", "2"):
        subprocess.run([sys.executable, "-c", script, str(tmp_path / "g.pickle"), str(tmp_path / seed / "kg")],
                       check=True, env={**os.environ, "PYTHONHASHSEED": seed})
    for ext in ("ttl", "nt", "jsonld"):
        assert (tmp_path / "1" / f"kg.{ext}").read_bytes() == (tmp_path / "2" / f"kg.{ext}").read_bytes(), ext


def test_base_changes_every_minted_iri():
    rdf = to_rdf(_small_graph(), base="https://other.example/")
    subjects = {s for s in rdf.subjects() if isinstance(s, URIRef)}
    assert subjects and all(s.startswith("https://other.example/") for s in subjects)


@pytest.mark.parametrize("failing", ["ttl", "nt", "jsonld"])
def test_a_failed_write_leaves_previous_files_untouched(tmp_path, exported, monkeypatch, failing):
    paths = write_rdf(exported, tmp_path / "kg")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def fail(*args, **kwargs):
        raise RuntimeError("disk on fire")

    if failing == "jsonld":  # written after the other two: they are already in temp files
        monkeypatch.setattr(JsonLd, "node", fail)
    else:
        real = ox.serialize
        ox_format = ox.RdfFormat.TURTLE if failing == "ttl" else ox.RdfFormat.N_TRIPLES
        monkeypatch.setattr(serialize.ox, "serialize", lambda *a, format, **k: fail() if format == ox_format
                            else real(*a, format=format, **k))
    bigger = to_rdf(_small_graph(), base="https://other.example/")
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_rdf(bigger, tmp_path / "kg")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert set(before) == {paths[ext].name for ext in paths}
