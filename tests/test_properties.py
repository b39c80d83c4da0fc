"""Property: whatever the text, extraction does not crash, offsets slice the original, and the
export parses back and validates."""
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.extract import extract_papers
from kg.extract.pipeline import load_pipeline
from kg.link.graph import build_graph
from kg.model import Paper
from kg.write.shapes import to_rdf, validate
from kg.write.serialize import write_rdf
from kg.resolve import resolve

pytestmark = pytest.mark.slow  # property-based: dozens of generated corpora built


# Pieces that exercise the markup cleaner and the name rules, mixed with arbitrary text.
FRAGMENTS = st.sampled_from([
    "We propose ", "E-GRPO", " (GRPO)", "Large Language Models (LLMs)", " on CIFAR-10", "$K$", r"\textit{x}",
    r"N\"uwa", "**bold**", "*em*", "&amp;", "&#x1F600;", "<script>alert(1)</script>", '"><img onerror=x>',
    "\\", "{", "}", "\n\n", ". ", ", a novel benchmark", " outperforms ", "Qwen2.5-VL-7B-Instruct", "\x00", "é",
])
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(max_size=30)), min_size=1, max_size=25).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(abstracts=st.lists(TEXT.filter(lambda t: t.strip()), min_size=1, max_size=3))
def test_any_text_extracts_and_exports_valid_rdf(tmp_path_factory, abstracts):
    papers = [Paper(f"p{i}", text) for i, text in enumerate(abstracts)]
    extractions = list(extract_papers(papers, nlp=load_pipeline()))
    for ex in extractions:
        for m in ex.mentions:
            assert 0 <= m.start <= m.end <= len(ex.paper.abstract)
    graph = build_graph(extractions, resolve(extractions))
    rdf = to_rdf(graph)
    conforms, report = validate(rdf)
    assert conforms, report
    files = write_rdf(rdf, tmp_path_factory.mktemp("rdf") / "g")
    for fmt, path in files.items():
        parsed = list(ox.parse(path=str(path), format={"ttl": ox.RdfFormat.TURTLE, "nt": ox.RdfFormat.N_TRIPLES,
                                                      "jsonld": ox.RdfFormat.JSON_LD}[fmt]))
        assert len(parsed) == len(rdf), fmt
