"""Every input format builds: OpenReview API notes (v1, v2), the arXiv snapshot, BibTeX."""

import pytest
from click.testing import CliRunner

from kg.cli import main
from kg.ingest import detect_format, read_papers

from support import FIXTURES


def _read(name):
    skipped = []
    return list(read_papers([FIXTURES / name], on_skip=skipped.append)), skipped


def test_openreview_v2_notes_unwrap_values():
    [paper], skipped = _read("openreview_v2.json")
    assert paper.id == "Xk9aB3dE1f" and paper.title == "Routing Tokens with RouteNet"
    assert paper.keywords == ["mixture of experts", "routing"] and paper.authors == ["Ada Lovelace", "Alan Turing"]
    assert paper.venue == "ICLR 2026 Conference Submission" and paper.year == 2025  # cdate: Sept 2025
    assert paper.url == "https://openreview.net/forum?id=Xk9aB3dE1f"
    assert len(skipped) == 1 and "openreview_v2.json#note:2: record has no abstract" in str(skipped[0])


def test_openreview_v1_notes_have_plain_strings():
    [paper], _ = _read("openreview_v1.json")
    assert paper.id == "B1ckMDqlg" and paper.title == "Sparse Gates for Huge Networks" and paper.year == 2016


def test_arxiv_snapshot_records():
    [paper], _ = _read("arxiv.jsonl")
    assert paper.id == "2501.00001" and paper.title == "Compiling Attention Efficiently"
    assert paper.authors == ["Grace Hopper", "Edsger Dijkstra", "Barbara Liskov"]
    assert paper.keywords == ["cs.LG", "cs.PL"] and paper.year == 2025 and paper.venue == "arXiv"
    assert paper.url == "https://arxiv.org/abs/2501.00001"


def test_bibtex_entries_with_abstracts():
    [paper], skipped = _read("papers.bib")
    assert paper.id == "lovelace2025graph" and paper.title == "Signed Messages for GNNs"
    assert paper.authors == ["Lovelace, Ada", "Babbage, Charles"] and paper.year == 2025
    assert paper.venue == "Proceedings of the Test Conference"
    assert r"\textit{SignMix}" in paper.abstract  # the original is kept; extraction cleans it
    assert len(skipped) == 1 and "papers.bib:10" in str(skipped[0])


@pytest.mark.parametrize("name, fmt", [("openreview_v2.json", "openreview"), ("papers.bib", "bibtex"),
                                       ("arxiv.jsonl", "jsonl"), ("sample.txt", "txt"), ("papers.csv", "csv")])
def test_format_is_detected_by_extension(name, fmt):
    assert detect_format(FIXTURES / name) == fmt


@pytest.mark.parametrize("name, proposed", [("openreview_v2.json", "RouteNet"), ("openreview_v1.json", "SparseGate"),
                                            ("arxiv.jsonl", "FlashCompile"), ("papers.bib", "SignMix")])
def test_every_format_builds_a_graph(tmp_path, name, proposed):
    result = CliRunner().invoke(main, ["build", str(FIXTURES / name), "-o", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    query = CliRunner().invoke(main, ["query", "-g", str(tmp_path / "g"), "--format", "csv",
                                      "SELECT ?name WHERE { ?paper kg:proposes ?e . ?e skos:prefLabel ?name }"])
    assert proposed in query.output
