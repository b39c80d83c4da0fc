"""Extraction is cached by text and extractor version, and gives the same result on several processes."""

from kg.cache import ExtractionCache
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
