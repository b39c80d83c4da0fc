"""Incremental builds: adding abstracts to a corpus and building again, with the extraction cache
of the first build, gives the graph a full build of the whole corpus gives, triple for triple."""
from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pyoxigraph as ox
import pytest
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


def test_papers_removed_from_the_corpus_leave_the_graph_a_full_build_without_them_makes(tmp_path, monkeypatch):
    """The graph built from eight papers is rebuilt from six of them: the patched files, the kept tables
    and the store are those of a full build of the six, byte for byte and triple for triple."""
    monkeypatch.chdir(tmp_path)
    first, second = _split_corpus(tmp_path)
    _build(first, second, "-o", "shrunk/g")
    shrunk = CliRunner().invoke(main, ["build", str(first), "-o", "shrunk/g"])
    assert shrunk.exit_code == 0, shrunk.output
    _build(first, "-o", "full/g", "--no-cache")
    for suffix in (".nt", ".index.nt", ".ttl", ".jsonld", ".tables.json"):
        assert (tmp_path / f"shrunk/g{suffix}").read_bytes() == (tmp_path / f"full/g{suffix}").read_bytes(), suffix
    assert set(open_graph(tmp_path / "shrunk/g")) == set(open_graph(tmp_path / "full/g"))
    assert "and the SPARQL store (patched: " in shrunk.output  # the last build's blocks kept, not thrown away


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


_METHODS = ["GraphFormer", "TreeLSTM", "SparseMoE", "DiffPool", "ViT-S", "RetroNet", "FlowGAN", "MetaSGD", "ProtoNet",
            "DeepSets"]
_TASKS = ["node classification", "machine translation", "image segmentation", "few-shot learning", "text summarization",
          "speech recognition", "question answering", "link prediction", "object detection", "language modeling"]
_DATASETS = ["CIFAR-10", "ImageNet", "Penn Treebank", "SQuAD", "WMT14"]


def _hundred_papers(path):
    """100 abstracts, each proposing its own method for one of ten tasks on one of five datasets."""
    blocks = ["Synthetic Papers 2025"]
    for i in range(100):
        method, task, dataset = _METHODS[i % 10], _TASKS[i * 3 % 10], _DATASETS[i % 5]
        blocks.append(f"We propose {method}-{i}, a model for {task} built on {method}. We evaluate it on {dataset}, "
                      f"where it outperforms {_METHODS[(i + 1) % 10]} by {i % 7 + 1}.{i % 10} points of accuracy.")
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")


def _subjects(stem):
    """Each subject of a written graph (its export and its index) with its N-Triples lines."""
    lines = defaultdict(set)
    for suffix in (".nt", ".index.nt"):
        for line in stem.with_name(stem.name + suffix).read_text(encoding="utf-8").splitlines():
            lines[line.split(" ", 1)[0]].add(line)
    return lines


def test_adding_one_percent_rewrites_only_the_subjects_the_new_paper_changed(tmp_path, monkeypatch):
    """A 100-paper graph gains a paper: the rebuild patches the files' blocks and the store for exactly
    the subjects whose triples differ between the two graphs, built in full, and says how many."""
    monkeypatch.chdir(tmp_path)
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    _hundred_papers(old)
    new.write_text("New Papers 2025\n\nWe propose HashNet, a model for node classification built on GraphFormer. "
                   "We evaluate it on CIFAR-10, where it outperforms ProtoNet by 2.5 points of accuracy.\n",
                   encoding="utf-8")
    first = CliRunner().invoke(main, ["build", str(old), "-o", "g/g"])
    assert "Wrote 9 outputs and the SPARQL store (written in full: the graph's first build) in " in first.output
    before = _subjects(tmp_path / "g/g")
    again = CliRunner().invoke(main, ["build", str(old), str(new), "-o", "g/g"])
    assert again.exit_code == 0, again.output
    # The full build reads the same extractions (the extraction cache copied, not the record of the last
    # build), so it writes every block anew: whether extraction from the cache equals extraction afresh is
    # the test above's subject.
    (tmp_path / "full/.kg-cache").mkdir(parents=True)
    shutil.copy(tmp_path / "g/.kg-cache/extractions.sqlite", tmp_path / "full/.kg-cache/extractions.sqlite")
    full = CliRunner().invoke(main, ["build", str(old), str(new), "-o", "full/g"])
    assert "(written in full: the graph's first build)" in full.output
    after = _subjects(tmp_path / "full/g")
    changed = {subject for subject, lines in after.items() if before.get(subject) != lines}
    papers = {s for s in changed if re.fullmatch(r"<https://w3id\.org/kg/id/paper/[^#>]+>", s)}
    entities = {s for s in changed if re.fullmatch(r"<https://w3id\.org/kg/id/(method|task|dataset|metric|model)/[^#>]+>", s)}
    said = re.search(r"Wrote 9 outputs and the SPARQL store \(patched: ([\d,]+) of ([\d,]+) subjects new or changed, "
                     r"([\d,]+) papers? and ([\d,]+) entit(?:y|ies) among them\)", again.output)
    assert said, again.output
    rewritten, written, said_papers, said_entities = (int(group.replace(",", "")) for group in said.groups())
    assert (rewritten, written) == (len(changed), len(after))
    assert (said_papers, said_entities) == (len(papers), len(entities))
    # The new paper and the entities it names are among them; most of the graph is not.
    assert len(papers) >= 1 and len(entities) >= 4
    all_entities = [s for s in after if re.fullmatch(r"<https://w3id\.org/kg/id/(method|task|dataset|metric|model)/[^#>]+>", s)]
    assert len(entities) < len(all_entities) / 3, (len(entities), len(all_entities))
    assert len(changed) < len(after) / 5
    # And what was patched is what a full build writes.
    assert (tmp_path / "g/g.nt").read_bytes() == (tmp_path / "full/g.nt").read_bytes()
    assert set(open_graph(tmp_path / "g/g")) == set(open_graph(tmp_path / "full/g"))
    # Another base IRI changes every block: everything is written again, and the build says why.
    other = CliRunner().invoke(main, ["build", str(old), str(new), "-o", "g/g", "--base", "https://example.org/kg/"])
    assert "(written in full: another base IRI or kg version)" in other.output


def test_a_rebuild_whose_last_files_were_changed_writes_them_in_full(tmp_path, monkeypatch):
    """The last build's N-Triples edited by hand: its blocks cannot be trusted, so the rebuild serializes
    every block and fills a new store, says so, and writes what a full build writes."""
    monkeypatch.chdir(tmp_path)
    first, second = _split_corpus(tmp_path)
    _build(first, "-o", "g/g")
    nt = (tmp_path / "g/g.nt").resolve()
    nt.write_bytes(nt.read_bytes() + b"<https://e.org/a> <https://e.org/b> <https://e.org/c> .\n")
    again = CliRunner().invoke(main, ["build", str(first), str(second), "-o", "g/g"])
    assert ("(written in full: the last build's N-Triples are gone or changed; g.nt changed since the last build: "
            "not copied, serialized anew)") in again.output
    _build(first, second, "-o", "full/g", "--no-cache")
    assert (tmp_path / "g/g.nt").read_bytes() == (tmp_path / "full/g.nt").read_bytes()
    assert set(open_graph(tmp_path / "g/g")) == set(open_graph(tmp_path / "full/g"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The split sample corpus and its full builds, ``full/g`` (both files) and ``first/g`` (the first), in a
    folder the tests build in (the graph names its input files relative to the working folder, so every
    build runs there)."""
    folder = tmp_path_factory.mktemp("corpus")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        _split_corpus(folder)
        _build("first.txt", "new.txt", "-o", "full/g", "--no-cache")
        _build("first.txt", "-o", "first/g", "--no-cache")
    return folder


def _outputs(stem):
    return {suffix: stem.with_name(stem.name + suffix).read_bytes() for suffix in (".nt", ".ttl", ".jsonld", ".index.nt")}


def _one_byte_changed(data: bytes, full: bytes) -> bytes:
    """``data`` with one letter changed in place, the same size and a valid file still, in a block the
    rebuild would copy: one whose subject has the same lines in the full build, ``full`` (JSON-LD: the same line)."""
    def blocks(text: bytes) -> dict[bytes, set[bytes]]:
        by_key = defaultdict(set)
        for line in text.splitlines(keepends=True):
            by_key[line if text.startswith(b"{") else line.split(b" ", 1)[0]].add(line)
        return by_key

    old, new = blocks(data), blocks(full)
    kept = [line for line in data.splitlines(keepends=True)
            if old[key := line if data.startswith(b"{") else line.split(b" ", 1)[0]] == new.get(key) and len(line) > 80]
    line = kept[len(kept) // 2]
    at = data.index(line) + next(i for i in range(60, len(line)) if line[i:i + 1].isalpha())
    return data[:at] + (b"Q" if data[at:at + 1] != b"Q" else b"R") + data[at + 1:]


def _sorted_lines(data: bytes, full: bytes) -> bytes:
    return b"".join(sorted(data.splitlines(keepends=True)))


@pytest.mark.parametrize("suffix, damage", [(".nt", _one_byte_changed), (".jsonld", _one_byte_changed),
                                            (".index.nt", _one_byte_changed), (".nt", _sorted_lines)],
                         ids=["nt-byte", "jsonld-byte", "index-byte", "nt-sorted"])
def test_a_last_build_file_changed_in_place_at_the_same_size_is_not_copied(corpus, monkeypatch, suffix, damage):
    """The last build's file changed where it lies, its size kept: the rebuild finds its bytes are not the
    ones it recorded, copies none of them, says so, and writes what a full build writes, files and store."""
    monkeypatch.chdir(corpus)
    stem = corpus / damage.__name__.strip("_") / suffix.strip(".") / "g"
    _build("first.txt", "-o", stem)
    file = stem.with_name(stem.name + suffix).resolve()
    before = file.read_bytes()
    file.write_bytes(damage(before, _outputs(corpus / "full/g")[suffix]))  # in place: the same file, the same size
    assert file.read_bytes() != before and file.stat().st_size == len(before)
    again = CliRunner().invoke(main, ["build", "first.txt", "new.txt", "-o", str(stem)])
    assert again.exit_code == 0, again.output
    assert _outputs(stem) == _outputs(corpus / "full/g")
    assert set(open_graph(stem)) == set(open_graph(corpus / "full/g"))
    assert f"g{suffix} changed since the last build: not copied, serialized anew" in again.output


def _swapped(store: Path, other: Path) -> None:
    shutil.rmtree(store)
    shutil.copytree(other, store)


def _swapped_with_its_mark(store: Path, other: Path) -> None:
    mark = (store / "kg-build-mark").read_bytes()
    _swapped(store, other)
    (store / "kg-build-mark").write_bytes(mark)


def _written_in_place(store: Path, other: Path) -> None:
    writable = ox.Store(str(store))
    writable.add(ox.Quad(ox.NamedNode("https://example.org/planted"), ox.NamedNode("https://example.org/p"), ox.Literal("x")))
    writable.flush()
    del writable


@pytest.mark.parametrize("damage", [_swapped, _swapped_with_its_mark, _written_in_place],
                         ids=["swapped", "swapped-with-its-mark", "written-in-place"])
@pytest.mark.parametrize("inputs, full", [(("first.txt", "new.txt"), "full/g"), (("first.txt",), "first/g")],
                         ids=["grown", "same"])
def test_a_store_swapped_or_written_to_is_written_in_full_not_patched(corpus, monkeypatch, inputs, full, damage):
    """The last build's store replaced by another graph's (with its own mark, or the last build's copied in),
    or a triple added to it in place: patching it would carry what no file says forward, and keeping it beside
    the same files would answer from it, so the rebuild, of a grown corpus or of the same, fills a new one, says
    why, and the store holds what a full build's does."""
    monkeypatch.chdir(corpus)
    stem = Path(damage.__name__.strip("_"), *inputs, "g")
    _build("first.txt", "-o", stem)
    _build("new.txt", "-o", "other/h")
    damage((corpus / stem.with_name("g.oxigraph")).resolve(), (corpus / "other/h.oxigraph").resolve())
    again = CliRunner().invoke(main, ["build", *inputs, "-o", str(stem)])
    assert again.exit_code == 0, again.output
    assert set(open_graph(corpus / stem)) == set(open_graph(corpus / full))
    assert "(written in full: the store is gone or not the one the last build wrote)" in again.output
