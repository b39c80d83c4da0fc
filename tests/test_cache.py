"""Extraction is cached by text and extractor version, and gives the same result on several processes; a
damaged cache file is set aside and made anew, never stopping a build."""

import os
import random
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

import kg.cache
from kg.cache import ExtractionCache, LastBuilds
from kg.cli import main
from kg.errors import KGError
from kg.store import open_graph
from kg.extract import extract_all, extract_papers, in_processes
from kg.ingest import read_papers

from support import FIXTURES


def _papers():
    return list(read_papers([FIXTURES / "sample.txt"]))


def test_parallel_extraction_equals_serial_in_order():
    papers = _papers()
    serial = [ex.to_json() for ex in extract_papers(papers)]
    parallel = [ex.to_json() for ex in extract_all(papers, executor=in_processes(2), chunk_size=3)]
    assert parallel == serial


def test_cache_hits_skip_extraction_and_keep_current_metadata(tmp_path, monkeypatch):
    papers = _papers()
    cache = ExtractionCache(tmp_path / "c.sqlite", extractor="v1")
    first = extract_all(papers, cache=cache)
    papers[0].title = "A title added later"

    import kg.extract as extract_module

    def fail(_):
        raise AssertionError("a cached abstract was extracted again")

    monkeypatch.setattr(extract_module, "extract_chunk", fail)
    second = extract_all(papers, cache=cache)
    assert [ex.mentions for ex in second] == [ex.mentions for ex in first]
    assert second[0].paper.title == "A title added later"


def test_another_extractor_version_misses_the_cache(tmp_path):
    papers = _papers()[:2]
    ExtractionCache(tmp_path / "c.sqlite", extractor="v1").put(extract_all(papers))
    newer = ExtractionCache(tmp_path / "c.sqlite", extractor="v2")
    assert newer.get(papers[0]) is None
    assert ExtractionCache(tmp_path / "c.sqlite", extractor="v1").get(papers[0]) is not None


def test_the_parse_tokens_travel_with_the_extraction_through_the_cache(tmp_path):
    from kg.model import Paper

    text = "We propose **E-GRPO** for question answering."
    [extraction] = extract_all([Paper("p", text)])
    words, spans = extraction.token_list()
    # Each token's offsets select it in the abstract as written (markup left out: "E-GRPO", not "**E-GRPO**").
    assert [w.rstrip() for w in words] == ["We", "propose", "E-GRPO", "for", "question", "answering", "."]
    assert [text[spans[2 * i]:spans[2 * i + 1]] for i in range(len(words))] == [w.rstrip() for w in words]
    cache = ExtractionCache(tmp_path / "c.sqlite", extractor="v1")
    cache.put([extraction])
    assert cache.get(Paper("p", text)).token_list() == (words, spans)


def test_an_entry_with_roles_apart_from_the_mentions_is_a_miss_and_is_extracted_again(tmp_path):
    import json

    import pytest

    from kg.model import Paper, PaperExtraction

    paper = Paper("p", "We propose E-GRPO for question answering.")
    cache = ExtractionCache(tmp_path / "c.sqlite", extractor="v1")
    [extraction] = extract_all([paper], cache=cache)
    old = extraction.to_json()
    del old["paper"]
    old["roles"] = [{"mention": i, "role": m.pop("role"), "confidence": m.pop("role_confidence")}
                    for i, m in enumerate(old["mentions"])]
    cache._db.execute("UPDATE extraction SET value = ?", (json.dumps(old),))
    with pytest.raises(ValueError, match="old form"):
        PaperExtraction.from_json({**old, "paper": {"id": "p", "abstract": paper.abstract}})
    assert cache.get(paper) is None
    [again] = extract_all([paper], cache=cache)
    assert again.mentions == extraction.mentions and cache.get(paper).mentions == extraction.mentions


def _truncated(path):
    path.write_bytes(path.read_bytes()[:3000])


def _random_bytes(path):
    path.write_bytes(random.Random(0).randbytes(4096))


def _random_bytes_inside(path):
    """4 KB of random bytes written over the middle of the file, which keeps its header."""
    data = path.read_bytes()
    at = len(data) // 2
    path.write_bytes(data[:at] + random.Random(0).randbytes(4096) + data[at + 4096:])


@pytest.mark.parametrize("damage", [_truncated, _random_bytes, _random_bytes_inside])
@pytest.mark.parametrize("name", ["builds.sqlite", "extractions.sqlite"])
def test_a_damaged_cache_file_is_set_aside_and_the_build_goes_on(tmp_path, sample, name, damage):
    """Either cache file truncated or overwritten: the next build sets it aside with the time in its name,
    says so in one line, makes it anew, and builds the graph a build without a cache builds (the session's
    sample, built with a cache that started empty); the build after that uses the new file and says nothing of it."""
    def build():
        result = CliRunner().invoke(main, ["build", "-q", "-j", "1", str(FIXTURES / "sample.txt"),
                                           "-o", str(tmp_path / "sample")])
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        return result.output

    shutil.copytree(sample.parent / ".kg-cache", tmp_path / ".kg-cache")  # the cache the sample's build left
    cache = tmp_path / ".kg-cache" / name
    damage(cache)
    said = [line for line in build().splitlines() if "set aside" in line]
    kind = "build" if name == "builds.sqlite" else "extraction"
    assert len(said) == 1 and said[0].startswith(f"The {kind} cache {cache} could not be read ("), said
    [aside] = [path.name for path in cache.parent.iterdir() if path.name.startswith(f"{name}.damaged-")]
    assert said[0].endswith(f"): set aside as {aside}, and made anew.")
    assert set(open_graph(tmp_path / "sample")) == set(open_graph(sample))
    assert "set aside" not in build()


def _a_folder(path):
    path.mkdir()


def _a_fifo(path):
    os.mkfifo(path)


@pytest.mark.parametrize("make, said", [(_a_folder, "is a folder, not a file kg wrote: move it away"),
                                        (_a_fifo, "is a FIFO, not a file kg wrote: move it away")])
def test_a_folder_or_fifo_where_the_build_cache_belongs_is_named_with_what_to_do(tmp_path, make, said):
    cache = tmp_path / ".kg-cache" / "builds.sqlite"
    cache.parent.mkdir()
    make(cache)
    result = CliRunner().invoke(main, ["build", "-q", "-j", "1", str(FIXTURES / "sample.txt"), "-o", str(tmp_path / "g")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"The build cache {cache} {said}, or build with --no-cache." in result.output
    assert "free some space" not in result.output


def test_a_build_cache_another_program_holds_locked_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(kg.cache, "LOCK_WAIT", 0.2)  # the build's wait, shortened: the outcome is the same
    cache = tmp_path / "builds.sqlite"
    LastBuilds(cache).close()
    holder = sqlite3.connect(cache, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(KGError, match="another kg build or program holds it; let that one end, or build with"):
            LastBuilds(cache)
    finally:
        holder.close()
