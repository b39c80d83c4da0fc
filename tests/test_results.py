"""Entity relations and reported results in the graph, the export, the shapes and ``kg leaderboard``."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from rdflib import Literal, URIRef
from rdflib.namespace import RDF, XSD

from kg import vocab
from kg.cli import main
from kg.graph import build_graph
from kg.ingest import read_papers
from kg.model import Entity, Link, Mention, Paper, PaperExtraction, Result, Role
from kg.rdf import to_rdf, validate
from kg.relations import sentence_relations
from kg.store import open_graph, run_query
from kg.vocab import KG
from support import FIXTURES, build

BASE = "https://example.org/kg/"
TEXT = "We propose TapAgent. TapAgent reaches a success rate of 71.4% on AndroidWorld, up from 60.0%."


def _at(needle: str) -> tuple[int, int]:
    start = TEXT.index(needle)
    return start, start + len(needle)


@pytest.fixture
def exported():
    """One paper: TapAgent evaluatedOn AndroidWorld, and its 71.4% success rate there."""
    mentions = [Mention(*_at("TapAgent"), "TapAgent", "Method", 0, 0.9, "rules/1"),
                Mention(*_at("success rate"), "success rate", "Metric", 1, 0.8, "rules/1"),
                Mention(*_at("AndroidWorld"), "AndroidWorld", "Dataset", 1, 0.8, "rules/1")]
    roles = [Role(0, "proposes", 0.9), Role(1, "measures", 0.8), Role(2, "evaluatesOn", 0.8)]
    value = _at("71.4%")
    ex = PaperExtraction(Paper("p1", TEXT), [(0, 20), (21, len(TEXT))], mentions, roles, {},
                         links=[Link(0, "evaluatedOn", 2, 1, 0.7)],
                         results=[Result(*value, 71.4, "%", 1, 1, 2, 0, 60.0, "score", 0.8)])
    entities = [Entity("tapagent", "Method", "TapAgent", [], [("p1", 0)]),
                Entity("success rate", "Metric", "success rate", [], [("p1", 1)]),
                Entity("androidworld", "Dataset", "AndroidWorld", [], [("p1", 2)])]
    return to_rdf(build_graph([ex], entities, sentence_relations(entities, [ex])), base=BASE)


def _iri(kind: str, key: str) -> URIRef:
    return vocab.entity_iri(BASE, kind, key)


def _result(g) -> URIRef:
    [result] = g.subjects(RDF.type, KG.Result)
    return result


def test_a_result_is_exported_with_its_parts_and_evidence(exported):
    result = _result(exported)
    assert exported.value(result, KG.value) == Literal("71.4", datatype=XSD.decimal)
    assert exported.value(result, KG.previousValue) == Literal("60", datatype=XSD.decimal)
    assert str(exported.value(result, KG.unit)) == "%"
    assert exported.value(result, KG.onDataset) == _iri("Dataset", "androidworld")
    assert exported.value(result, KG.ofMetric) == _iri("Metric", "success rate")
    assert exported.value(result, KG.achievedBy) == _iri("Method", "tapagent")
    position = vocab.selector_iri(result, "pos")
    start, end = (int(exported.value(position, p)) for p in (vocab.OA.start, vocab.OA.end))
    assert TEXT[start:end] == "71.4%"
    assert (vocab.paper_iri(BASE, "p1"), KG.reports, result) in exported
    assert (_iri("Method", "tapagent"), KG.evaluatedOn, _iri("Dataset", "androidworld")) in exported
    conforms, report = validate(exported)
    assert conforms, report


BROKEN = {
    "result without value": (lambda g: g.remove((_result(g), KG.value, None)), "kg:value"),
    "value not a decimal": (lambda g: g.set((_result(g), KG.value, Literal("high"))), "kg:value"),
    "unknown unit": (lambda g: g.set((_result(g), KG.unit, Literal("furlongs"))), "kg:unit"),
    "result on a metric": (lambda g: g.set((_result(g), KG.onDataset, _iri("Metric", "success rate"))),
                           "kg:onDataset"),
    "result achieved by a dataset": (
        lambda g: g.set((_result(g), KG.achievedBy, _iri("Dataset", "androidworld"))), "achieved by"),
    "result no paper reports": (lambda g: g.remove((None, KG.reports, None)), "Exactly one paper"),
    "result without selectors": (lambda g: g.remove((_result(g), vocab.OA.hasSelector, None)), "oa:hasSelector"),
    "dataset evaluated on a dataset": (
        lambda g: g.add((_iri("Dataset", "androidworld"), KG.evaluatedOn, _iri("Dataset", "androidworld"))),
        "kg:evaluatedOn"),
    "method evaluated on a metric": (
        lambda g: g.add((_iri("Method", "tapagent"), KG.evaluatedOn, _iri("Metric", "success rate"))),
        "kg:evaluatedOn"),
    "metric used for a dataset": (
        lambda g: g.add((_iri("Metric", "success rate"), KG.usedFor, _iri("Dataset", "androidworld"))),
        "kg:usedFor"),
}


@pytest.mark.parametrize("breakage", BROKEN, ids=list(BROKEN))
def test_broken_relations_and_results_fail_validation(exported, breakage):
    breakage_fn, expected = BROKEN[breakage]
    breakage_fn(exported)
    conforms, report = validate(exported)
    assert not conforms
    assert expected in report, report


# ---------------------------------------------------------------- the sample, end to end


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return build(FIXTURES / "sample.txt", tmp_path_factory.mktemp("sample"))


def test_sparql_finds_what_a_model_is_evaluated_on_with_its_result_and_evidence(sample):
    rows = run_query(open_graph(sample), """
        SELECT ?dataset ?value ?unit ?metric ?sentence ?start ?end ?abstract WHERE {
          ?model skos:prefLabel "PhoneRL-9B" ; kg:evaluatedOn ?d .
          ?d skos:prefLabel ?dataset .
          ?result kg:achievedBy ?model ; kg:onDataset ?d ; kg:value ?value ; kg:unit ?unit ;
                  kg:ofMetric/skos:prefLabel ?metric ; kg:sentence ?sentence ;
                  oa:hasSelector [ a oa:TextPositionSelector ; oa:start ?start ; oa:end ?end ] ;
                  prov:wasDerivedFrom/dcterms:abstract ?abstract .
        }""")
    [row] = list(rows)
    assert (row["dataset"].value, float(row["value"].value), row["unit"].value, row["metric"].value) == (
        "AndroidWorld", 61.3, "%", "success rate")
    abstract = row["abstract"].value
    assert abstract[int(row["start"].value):int(row["end"].value)] == "61.3%"
    assert row["sentence"].value in abstract


def test_relation_evidence_slices_the_abstract_to_the_object_mention(sample):
    abstracts = {p.id: p.abstract for p in read_papers([FIXTURES / "sample.txt"])}
    rows = list(run_query(open_graph(sample), """
        SELECT ?id ?start ?end ?exact ?target WHERE {
          ?s a kg:Statement ; rdf:predicate kg:evaluatedOn ; rdf:object/skos:prefLabel ?target ;
             prov:wasDerivedFrom/dcterms:identifier ?id ;
             oa:hasSelector [ a oa:TextPositionSelector ; oa:start ?start ; oa:end ?end ] .
        }"""))
    assert {"AndroidWorld", "RefCOCO", "NeedleQA"} <= {row["target"].value for row in rows}
    for row in rows:
        assert abstracts[row["id"].value][int(row["start"].value):int(row["end"].value)] == row["target"].value


def test_relations_carry_their_support_in_papers(sample):
    rows = list(run_query(open_graph(sample), """
        SELECT ?relation (COUNT(DISTINCT ?paper) AS ?papers) WHERE {
          ?s a kg:Statement ; rdf:predicate ?relation ; prov:wasDerivedFrom ?paper ;
             rdf:subject/skos:prefLabel "HeteroMix" ; rdf:object/skos:prefLabel "GCN" .
        } GROUP BY ?relation"""))
    assert [(r["relation"].value, int(r["papers"].value)) for r in rows] == [(str(KG.outperforms), 1)]


def test_leaderboard_puts_the_lower_fid_first(sample):
    result = CliRunner().invoke(main, ["leaderboard", "imagenet", "-g", str(sample), "--format", "json"])
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    assert board["dataset"] == "ImageNet"
    assert [(r["subject"], r["value"], r["metric"]) for r in board["results"]] == [
        ("TFM", 2.9, "FID"), ("flow matching", 5.1, "FID")]


def test_leaderboard_table_names_the_model_value_and_sentence(sample):
    result = CliRunner().invoke(main, ["leaderboard", "AndroidWorld", "-g", str(sample)])
    assert result.exit_code == 0, result.output
    assert "success rate, higher is better" in result.output
    assert "61.3%  PhoneRL-9B" in result.output and "reaches a success rate of 61.3% on AndroidWorld" in result.output


def test_leaderboard_of_an_unknown_dataset_suggests_names(sample):
    result = CliRunner().invoke(main, ["leaderboard", "AndroidWorlds2", "-g", str(sample)])
    assert result.exit_code == 1
    assert "No entity named 'AndroidWorlds2'" in result.output and "AndroidWorld" in result.output


def test_every_selector_quotes_exactly_what_its_offsets_slice_markup_included(tmp_path):
    """'N\\"uwa' is read as "Nüwa", but both selectors point at the abstract as stored."""
    corpus = tmp_path / "markup.txt"
    corpus.write_text('Markup Workshop 2025 Papers\n\nWe propose N\\"uwa, a token pruning framework for '
                      '**visual question answering**. N\\"uwa outperforms FastV on VQAv2 (80.1\\%).\n',
                      encoding="utf-8")
    stem = build(corpus, tmp_path)
    rows = list(run_query(open_graph(stem), """
        SELECT ?abstract ?start ?end ?exact WHERE {
          ?x oa:hasSelector ?p, ?q ; prov:wasDerivedFrom/dcterms:abstract ?abstract .
          ?p a oa:TextPositionSelector ; oa:start ?start ; oa:end ?end .
          ?q a oa:TextQuoteSelector ; oa:exact ?exact .
        }"""))
    assert len(rows) > 5
    for row in rows:
        assert row["abstract"].value[int(row["start"].value):int(row["end"].value)] == row["exact"].value
