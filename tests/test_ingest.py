"""Ingest reads the corpus text format, CSV and JSON Lines into Papers, and names bad records."""
import json

import pytest

from kg.build import unique_papers
from kg.errors import InputError
from kg.ingest import expand_inputs, read_papers
from kg.text import clean

from support import FIXTURES


def test_corpus_text_format_gives_one_paper_per_block_with_venue_and_line():
    papers = list(read_papers([FIXTURES / "sample.txt"]))
    assert len(papers) == 8
    assert {p.venue for p in papers} == {"Sample Workshop 2025"}
    assert papers[0].year == 2025
    assert papers[0].source.line == 3 and papers[1].source.line == 5
    assert papers[0].abstract.startswith("Reinforcement learning from verifiable rewards")


def test_ids_are_stable_across_runs_and_derived_from_text():
    first = [p.id for p in read_papers([FIXTURES / "sample.txt"])]
    second = [p.id for p in read_papers([FIXTURES / "sample.txt"])]
    assert first == second and len(set(first)) == 8


def test_csv_columns_match_case_insensitively_and_records_without_abstract_are_skipped():
    skipped = []
    papers = list(read_papers([FIXTURES / "papers.csv"], on_skip=skipped.append))
    assert [p.id for p in papers] == ["rk1", "rk3"]
    assert papers[0].title == "Sparse Mixture Routing"
    assert papers[0].keywords == ["mixture of experts", "routing"]
    assert "\n" in papers[0].abstract  # a quoted newline stays in the abstract
    assert papers[1].title == 'Quoted, "title"' and papers[1].keywords == ["gnn", "graphs"]
    assert len(skipped) == 1 and str(skipped[0]).startswith(f"{FIXTURES / 'papers.csv'}:4:")
    assert "no abstract" in str(skipped[0])


def test_jsonl_reads_metadata_and_names_each_bad_line():
    skipped = []
    papers = list(read_papers([FIXTURES / "papers.jsonl"], on_skip=skipped.append))
    assert [p.id for p in papers] == ["j1", "j2"]
    assert papers[0].authors == ["A. Author", "B. Author"] and papers[0].year == 2025
    assert papers[0].venue == "Test Conf 2025" and papers[0].url == "https://example.org/j1"
    messages = [str(e) for e in skipped]
    assert messages[0].endswith("papers.jsonl:3: record has no abstract; skipped")
    assert "papers.jsonl:4: invalid JSON" in messages[1]


def test_strict_mode_raises_on_the_first_bad_record():
    with pytest.raises(InputError, match=r"papers\.jsonl:3"):
        list(read_papers([FIXTURES / "papers.jsonl"], strict=True))


@pytest.mark.parametrize("content, message", [
    (b"", "empty file"),
    (b"Header\n\n\xff\xfe bad bytes\n", "not valid UTF-8"),
    (b"\x00\x01\x02binary", "binary file"),
])
def test_unreadable_files_are_reported_with_their_name(tmp_path, content, message):
    path = tmp_path / "broken.txt"
    path.write_bytes(content)
    skipped = []
    assert list(read_papers([path], on_skip=skipped.append)) == []
    assert str(path) in str(skipped[0]) and message in str(skipped[0])


def test_inputs_expand_folders_and_globs_and_reject_missing_paths(tmp_path):
    assert FIXTURES / "sample.txt" in expand_inputs([FIXTURES])
    assert expand_inputs([str(FIXTURES / "papers.*")]) == [FIXTURES / "papers.bib", FIXTURES / "papers.csv", FIXTURES / "papers.jsonl"]
    with pytest.raises(InputError, match="no such file"):
        expand_inputs([tmp_path / "missing.txt"])


def test_duplicate_abstracts_merge_into_one_paper(tmp_path):
    path = tmp_path / "dup.txt"
    path.write_text("Dup 2024 Papers\n\nWe propose X.\n\nwe  propose **X**.\n\nSomething else.\n")
    papers, duplicates = unique_papers(read_papers([path]))
    assert len(papers) == 2 and len(duplicates) == 1


def test_a_one_megabyte_abstract_is_skipped_with_its_size(tmp_path):
    path = tmp_path / "huge.jsonl"
    path.write_text('{"id": "ok", "abstract": "We propose X."}\n'
                    + '{"id": "huge", "abstract": "' + "word " * 210_000 + '"}\n')
    skipped = []
    assert [p.id for p in read_papers([path], on_skip=skipped.append)] == ["ok"]
    assert "huge.jsonl:2: abstract of 1,049,999 characters" in str(skipped[0])


def test_html_entities_are_read_and_kept_and_escaped_controls_dropped(tmp_path):
    path = tmp_path / "odd.jsonl"
    path.write_text('{"abstract": "Robustness &amp; accuracy of caf\\u00e9 models\\u0007 on ImageNet."}\n')
    [paper] = read_papers([path])
    assert paper.abstract == "Robustness &amp; accuracy of café models on ImageNet."


def test_a_form_feed_in_a_csv_cell_does_not_shift_the_line_numbers_after_it(tmp_path):
    path = tmp_path / "ff.csv"
    path.write_text('title,abstract\n"Page\x0cbreak","We propose X."\nEmpty,\n"Last","We propose Y."\n', encoding="utf-8")
    skipped = []
    papers = list(read_papers([path], on_skip=skipped.append))
    assert [p.source.line for p in papers] == [2, 4]  # the file's own line numbers (a form feed ends no line)
    assert str(skipped[0]).endswith("ff.csv:3: record has no abstract; skipped")


def test_an_unterminated_json_string_is_reported_once_with_its_column(tmp_path):
    path = tmp_path / "cut.jsonl"
    path.write_text('{"abstract": "We propose X.", "title": "cut off\n', encoding="utf-8")
    skipped = []
    assert list(read_papers([path], on_skip=skipped.append)) == []
    assert str(skipped[0]).endswith("cut.jsonl:1: invalid JSON (Unterminated string starting at: column 40); skipped")


def test_titles_authors_and_keywords_lose_bidi_overrides_and_zero_width_characters(tmp_path):
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"abstract": "We propose Z\u200bero\u200dNet.", "title": "LTR \u202eoverride\u202c here",
                                "authors": ["Ada\u2066 Lovelace\u2069"], "keywords": ["zero\u200b-shot"]}) + "\n",
                    encoding="utf-8")
    [paper] = read_papers([path])
    assert (paper.title, paper.authors, paper.keywords) == ("LTR override here", ["Ada Lovelace"], ["zero-shot"])
    assert paper.abstract == "We propose Z\u200bero\u200dNet."  # kept as written: evidence offsets point into it
    assert clean(paper.abstract).text == "We propose ZeroNet."


def test_a_csv_decision_column_is_kept_as_written_unless_its_codes_are_mapped(tmp_path):
    from kg.ingest import FileSetting

    path = tmp_path / "iclr.csv"
    path.write_text("PID,Decision,Abstract\np1,1,We propose X.\np2,Accept (Poster),We propose Y.\np3,7,We study Z.\n",
                    encoding="utf-8")
    assert [p.decision for p in read_papers([path])] == ["1", "Accept (Poster)", "7"]
    codes = FileSetting.parse("iclr.csv", "decisions=1=Accept (Oral);0=Reject")
    assert [p.decision for p in read_papers([path], settings=[codes])] == ["Accept (Oral)", "Accept (Poster)", "7"]
    year, venue = FileSetting.parse(str(path), "year=2017"), FileSetting.parse("*.csv", "venue=ICLR 2017")
    assert {(p.year, p.venue) for p in read_papers([path], settings=[year, venue])} == {(2017, "ICLR 2017")}
