"""A build survives bad records and bad places: one record never stops it, an output that cannot be
written is said in one line before any work, and a build that fails or dies leaves the previous
graph whole."""
from __future__ import annotations

import errno
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg.build as build_module
import kg.extract as extract_module
from kg.cli import main
from kg.store import open_graph
from kg.write import outputs
from support import FIXTURES


def _csv(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    import csv

    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["PID", "Title", "Abstract"])
        writer.writerows(rows)
    return path


GOOD = "We propose FooNet, a method for image classification on CIFAR-10 reaching 93.1% accuracy."


def _papers(stem: Path) -> int:
    result = open_graph(stem).query("SELECT (COUNT(?p) AS ?n) WHERE { ?p a <https://w3id.org/kg/ontology#Paper> }")
    return int(next(iter(result))["n"].value)


def _error_lines(output: str) -> list[str]:
    assert "Traceback" not in output, output
    return [line for line in output.splitlines() if line.startswith("Error:")]


@pytest.mark.parametrize("ending", ["1, 2", "We get 1, 2", "We use 1, 2, 3 and 4", "rgb0.0, 0.0, 0.55",
                                    "A more accurate answer. darkbluergb0.0, 0.0, 0.55"])
def test_an_abstract_ending_in_a_number_list_is_built(tmp_path, ending):
    corpus = _csv(tmp_path / "min.csv", [("p1", "T", ending), ("p2", "T2", GOOD)])
    result = CliRunner().invoke(main, ["build", "-q", "-j", "1", str(corpus), "-o", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert "skipped" not in result.output and _papers(tmp_path / "g") == 2


def test_a_graph_with_no_edges_says_so(tmp_path):
    corpus = _csv(tmp_path / "min.csv", [("p1", "T", "1, 2")])
    result = CliRunner().invoke(main, ["build", "-q", "-j", "1", str(corpus), "-o", str(tmp_path / "g")])
    assert result.exit_code == 0 and "Nodes: 1 Paper\nEdges: none\n" in result.output


@pytest.fixture
def one_record_raises(monkeypatch):
    """Extraction raises for any abstract that mentions BOOM, as a bug in a rule would."""
    real = extract_module.find_results

    def find_results(doc, spans):
        if "BOOM" in doc.text:
            raise ValueError("a rule broke on BOOM")
        return real(doc, spans)

    monkeypatch.setattr(extract_module, "find_results", find_results)


def test_a_record_whose_extraction_raises_is_listed_by_file_and_line_and_the_rest_is_built(tmp_path, one_record_raises):
    corpus = _csv(tmp_path / "c.csv", [("p1", "T1", GOOD), ("p2", "T2", "We study BOOM on ImageNet."),
                                       ("p3", "T3", "We propose BarNet for machine translation.")])
    result = CliRunner().invoke(main, ["build", "-q", "-j", "1", str(corpus), "-o", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert f"{corpus}:3: could not be extracted (ValueError: a rule broke on BOOM)" in result.output
    assert "skipped 1 record:" in result.output and _papers(tmp_path / "g") == 2


def test_with_strict_a_record_whose_extraction_raises_fails_the_build_with_its_line(tmp_path, one_record_raises):
    corpus = _csv(tmp_path / "c.csv", [("p1", "T1", GOOD), ("p2", "T2", "We study BOOM on ImageNet.")])
    result = CliRunner().invoke(main, ["build", "-q", "--strict", "-j", "1", str(corpus), "-o", str(tmp_path / "g")])
    assert result.exit_code == 1
    assert _error_lines(result.output) == [f"Error: {corpus}:3: could not be extracted (ValueError: a rule broke on BOOM)"]
    assert not (tmp_path / "g.nt").exists()


def test_a_record_repeating_an_id_with_another_abstract_is_kept_under_a_new_id_and_named(tmp_path):
    corpus = _csv(tmp_path / "c.csv", [("p1", "T1", GOOD), ("p1", "T1", GOOD),
                                       ("p1", "Other", "We propose BarNet for machine translation.")])
    result = CliRunner().invoke(main, ["build", "-q", "-j", "1", str(corpus), "-o", str(tmp_path / "g")])
    assert result.exit_code == 0, result.output
    assert "1 repeated record merged: p1" in result.output
    assert f"{corpus}:4: id 'p1' is another record's ({corpus}:2), with another abstract; kept as 'p1~2'" in result.output
    assert _papers(tmp_path / "g") == 2
    strict = CliRunner().invoke(main, ["build", "-q", "--strict", str(corpus), "-o", str(tmp_path / "h")])
    assert strict.exit_code == 1
    assert _error_lines(strict.output) == [f"Error: {corpus}:4: id 'p1' is another record's ({corpus}:2), with another abstract"]


@pytest.fixture
def previous(tmp_path) -> Path:
    """A graph built in ``tmp_path/g``, and what each of its files holds."""
    stem = tmp_path / "g"
    assert CliRunner().invoke(main, ["build", "-q", str(FIXTURES / "papers.jsonl"), "-o", str(stem)]).exit_code == 0
    return stem


def _files(stem: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(stem.parent.glob(f"{stem.name}.*")) if path.is_file()}


@pytest.fixture
def no_extraction(monkeypatch):
    """Fails the test if the build starts extracting: its error must come before any work."""
    def extract_all(*args, **kwargs):
        raise AssertionError("the build extracted before finding that it cannot write its outputs")

    monkeypatch.setattr(build_module, "extract_all", extract_all)


def test_a_folder_where_an_output_goes_fails_in_one_line_before_any_work(previous, no_extraction):
    before = _files(previous)
    previous.with_name("g.html").unlink()
    previous.with_name("g.html").mkdir()
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(previous)])
    assert result.exit_code == 1
    assert _error_lines(result.output) == [f"Error: {previous}.html is a folder, where kg build writes a file: "
                                           "move it away or choose another -o."]
    del before["g.html"]
    assert _files(previous) == before


def test_a_file_where_the_store_goes_is_kept_and_the_build_refused_in_one_line_before_any_work(previous, no_extraction):
    """``graphs/g.oxigraph`` a plain file kg did not write: the build would replace it, so it refuses, and says why."""
    store = previous.with_name("g.oxigraph")
    store.unlink()
    store.write_text("notes that are no store")
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(previous)])
    assert result.exit_code == 1
    assert _error_lines(result.output) == [f"Error: {store} is not a store kg wrote, where kg build writes its store: "
                                           "move it away or choose another -o."]
    assert store.read_text() == "notes that are no store"


def test_an_output_folder_under_a_file_fails_in_one_line_before_any_work(tmp_path, no_extraction):
    (tmp_path / "afile").write_text("not a folder")
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(tmp_path / "afile" / "sub" / "g")])
    assert result.exit_code == 1
    assert _error_lines(result.output) == [f"Error: {tmp_path / 'afile'} is a file, not a folder, so "
                                           f"{tmp_path / 'afile' / 'sub'} cannot be made: choose another -o."]


def test_an_output_folder_that_cannot_be_written_fails_in_one_line_before_any_work(previous, no_extraction, monkeypatch):
    # A read-only folder (root writes into a chmod 555 one, so the refusal is the file system's).
    def read_only(parent, prefix):
        raise PermissionError(errno.EROFS, "Read-only file system", str(parent))

    monkeypatch.setattr("kg.write.outputs._new_folder", read_only)
    before = _files(previous)
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(previous)])
    assert result.exit_code == 1
    assert _error_lines(result.output) == [f"Error: Cannot write into {previous.parent} (Read-only file system): "
                                           "choose a writable -o."]
    assert _files(previous) == before


def test_a_full_disk_while_writing_fails_in_one_line_and_leaves_the_previous_graph(previous, monkeypatch):
    def full(graph, path, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(build_module, "render_html", full)
    before = _files(previous)
    result = CliRunner().invoke(main, ["build", str(FIXTURES / "sample.txt"), "-o", str(previous)])
    assert result.exit_code == 1
    [line] = _error_lines(result.output)
    assert line.startswith("Error: Cannot write ") and "g.html (No space left on device); the previous graph" in line
    assert _files(previous) == before
    assert not [p for p in previous.parent.iterdir() if ".staging-" in p.name]


# Runs kg.write.outputs.make_current in a process that dies (os._exit) at its Nth change to the file system.
DIE_AT_STEP = """
import os, sys
from pathlib import Path
from kg.write import outputs

steps, stop = 0, int(sys.argv[3])

def counted(change):
    def run(*args, **kwargs):
        global steps
        steps += 1
        if steps == stop:
            os._exit(9)
        return change(*args, **kwargs)
    return run

for name in ("replace", "rename", "symlink", "link", "unlink", "rmdir", "mkdir"):
    setattr(os, name, counted(getattr(os, name)))
outputs.make_current(Path(sys.argv[1]), Path(sys.argv[2]))
"""


def _state(folder: Path) -> tuple[dict[str, bytes], set[Path], set]:
    """What the graph ``folder/g`` reads as (its files, and its triples as ``kg query`` finds them: from its
    store, else its files), and the build folders its paths lead into (plain files aside)."""
    paths = [path for path in folder.glob("g.*") if path.exists()]
    return (_files(folder / "g"), {path.resolve().parent for path in paths} - {folder.resolve()},
            set(open_graph(folder / "g")))


def _plain(links: Path, folder: Path, *, store: bool) -> None:
    """The graph ``links/g`` copied to ``folder`` as plain files, as an older kg wrote it (with its store, a
    plain folder) or as git checks ``graphs/sample.*`` out (no store)."""
    folder.mkdir()
    for path in links.glob("g.*"):
        if path.is_dir():
            if store:
                shutil.copytree(path, folder / path.name)
        else:
            shutil.copy2(path, folder / path.name)


@pytest.mark.slow  # a build killed at each of its steps in turn: dozens of processes
@pytest.mark.parametrize("start", ["links", "plain files and store", "plain files"])
def test_a_build_killed_at_any_step_of_making_it_current_leaves_one_whole_graph(previous, tmp_path, start):
    """Whatever the old graph's paths are (links into its build folder, plain files an older kg wrote, or
    plain files with no store as git checks them out), a build killed at any step of making the new graph
    current leaves every path reading the old graph or every path the new one, and the next build makes
    the new graph current from there, leaving no other build folder behind."""
    old_state = tmp_path / "old"
    if start == "links":
        shutil.copytree(previous.parent, old_state, symlinks=True, ignore=shutil.ignore_patterns("old"))
    else:
        _plain(previous.parent, old_state, store=start == "plain files and store")
    new_graph = tmp_path / "new" / "g"
    assert CliRunner().invoke(main, ["build", "-q", str(FIXTURES / "sample.txt"), "-o", str(new_graph)]).exit_code == 0
    old_files, new_files = _files(old_state / "g"), _files(new_graph)
    old_graph, new_triples = set(open_graph(old_state / "g")), set(open_graph(new_graph))
    assert old_files.keys() == new_files.keys() and old_files != new_files and old_graph != new_triples
    built = new_graph.with_name("g.nt").resolve().parent
    seen = []
    for stop in range(1, 200):
        folder = tmp_path / f"run{stop}"
        shutil.copytree(old_state, folder, symlinks=True)
        shutil.copytree(built, folder / "staged")
        died = subprocess.run([sys.executable, "-c", DIE_AT_STEP, str(folder / "staged"), str(folder / "g"), str(stop)],
                              capture_output=True, text=True)
        files, builds, triples = _state(folder)
        assert (files, triples) in ((old_files, old_graph), (new_files, new_triples)), \
            f"a build killed at step {stop} left a mixed graph"
        assert len(builds) <= 1, f"a build killed at step {stop} left paths into {builds}"
        seen.append("new" if files == new_files else "old")
        # The next build, from whatever this one left.
        shutil.copytree(built, outputs.stage(folder / "g"), dirs_exist_ok=True)
        [staging] = folder.glob(".g.staging-*")
        outputs.make_current(staging, folder / "g")
        files, builds, triples = _state(folder)
        assert (files, triples) == (new_files, new_triples) and len(builds) == 1, f"after a build killed at step {stop}"
        assert [path.resolve() for path in folder.glob(".g.build-*")] == list(builds), \
            f"a build killed at step {stop} left a build folder behind"
        shutil.rmtree(folder)
        if died.returncode == 0:
            break
        assert died.returncode == 9, died.stderr
    assert died.returncode == 0 and seen[-1] == "new" and "old" in seen
