"""Incremental builds: adding abstracts to a corpus and building again, with the extraction cache
of the first build, gives the graph a full build of the whole corpus gives, triple for triple."""
from __future__ import annotations

import re
from collections import defaultdict

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
    assert "Wrote 7 outputs and the SPARQL store (written in full: the graph's first build) in " in first.output
    before = _subjects(tmp_path / "g/g")
    again = CliRunner().invoke(main, ["build", str(old), str(new), "-o", "g/g"])
    assert again.exit_code == 0, again.output
    _build(old, new, "-o", "full/g", "--no-cache")
    after = _subjects(tmp_path / "full/g")
    changed = {subject for subject, lines in after.items() if before.get(subject) != lines}
    papers = {s for s in changed if re.fullmatch(r"<https://w3id\.org/kg/id/paper/[^#>]+>", s)}
    entities = {s for s in changed if re.fullmatch(r"<https://w3id\.org/kg/id/(method|task|dataset|metric|model)/[^#>]+>", s)}
    said = re.search(r"Wrote 7 outputs and the SPARQL store \(patched: ([\d,]+) of ([\d,]+) subjects new or changed, "
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
    assert "(written in full: the last build's store or N-Triples are gone or changed)" in again.output
    _build(first, second, "-o", "full/g", "--no-cache")
    assert (tmp_path / "g/g.nt").read_bytes() == (tmp_path / "full/g.nt").read_bytes()
    assert set(open_graph(tmp_path / "g/g")) == set(open_graph(tmp_path / "full/g"))
