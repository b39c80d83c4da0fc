"""Incremental builds: adding abstracts to a corpus and building again, with the extraction cache
of the first build, gives the graph a full build of the whole corpus gives, triple for triple."""
from __future__ import annotations

import pyoxigraph as ox
from click.testing import CliRunner

from kg.cli import main
from kg.store import open_graph
from support import FIXTURES


def _split_corpus(folder):
    """The sample corpus as two files: the first six abstracts, and the last two (the "new" papers)."""
    header, *blocks = FIXTURES.joinpath("sample.txt").read_text(encoding="utf-8").split("\n\n")
    first, second = folder / "first.txt", folder / "new.txt"
    first.write_text("\n\n".join([header, *blocks[:6]]) + "\n", encoding="utf-8")
    second.write_text("\n\n".join(["New Papers 2025", *blocks[6:]]), encoding="utf-8")
    return first, second


def _build(*args):
    result = CliRunner().invoke(main, ["build", "-q", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.output


def test_an_incremental_build_equals_a_full_build_triple_for_triple(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the graph names its input files relative to the working folder
    first, second = _split_corpus(tmp_path)
    # Incremental: the first corpus, then the same graph again with the new abstracts; the second
    # build finds the first six in the cache beside the graph and extracts only the two new ones.
    _build(first, "-o", "incremental/g")
    _build(first, second, "-o", "incremental/g")
    # Full: the whole corpus at once, extracting everything.
    _build(first, second, "-o", "full/g", "--no-cache")
    for suffix in (".nt", ".ttl", ".jsonld"):
        assert (tmp_path / f"incremental/g{suffix}").read_bytes() == (tmp_path / f"full/g{suffix}").read_bytes(), suffix
    assert set(open_graph(tmp_path / "incremental/g")) == set(open_graph(tmp_path / "full/g"))
    # And the new papers are in it, with the entities only they mention.
    titles = {str(row["t"].value) for row in open_graph(tmp_path / "full/g").query(
        "SELECT ?t WHERE { ?p a <https://w3id.org/kg/ontology#Paper> ; <http://www.w3.org/2000/01/rdf-schema#label> ?t }")}
    assert len(titles) == 8


def test_the_second_build_extracts_only_the_new_abstracts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first, second = _split_corpus(tmp_path)
    _build(first, "-o", "g/g")
    from kg import extract

    extracted = []
    original = extract.extract_papers

    def counting(papers, **options):
        papers = list(papers)
        extracted.extend(p.id for p in papers)
        return original(papers, **options)

    monkeypatch.setattr(extract, "extract_papers", counting)
    _build(first, second, "-o", "g/g", "-j", "1")
    assert len(extracted) == 2
    assert ox.Store.read_only(str(tmp_path / "g/g.oxigraph"))
