"""Ingest keeps every record it can read and names the ones it cannot: odd line separators, NUL bytes,
binary files and broken CSV quoting each cost one record at most, reported as file:line."""
import json

import pytest

from kg.errors import InputError
from kg.ingest import read_papers

# Characters str.splitlines() ends a line at, which JSON Lines, CSV and the corpus format do not.
LINE_SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0c", "\x1c", "\x1e", "\x0b"]


def read(path, **options):
    skipped = []
    papers = list(read_papers([path], on_skip=skipped.append, **options))
    return papers, [str(error) for error in skipped]


# --- item 11: line separators inside records --------------------------------------------------------

@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_jsonl_records_with_unicode_line_separators_are_kept_with_their_line_numbers(tmp_path, newline):
    path = tmp_path / "seps.jsonl"
    records = [{"id": f"r{n}", "title": f"Title{sep}{n}", "abstract": f"We propose X{sep}and Y."}
               for n, sep in enumerate(LINE_SEPARATORS)]
    # json.dumps(ensure_ascii=False) writes U+2028, U+2029 and U+0085 raw, as any JSON Lines writer may.
    lines = [json.dumps(record, ensure_ascii=False) for record in records] + ["{not json"]
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    papers, skipped = read(path)
    assert [p.id for p in papers] == [f"r{n}" for n in range(len(LINE_SEPARATORS))]
    assert [p.source.line for p in papers] == list(range(1, len(LINE_SEPARATORS) + 1))
    assert papers[0].abstract == "We propose X\u2028and Y."
    assert len(skipped) == 1 and f"seps.jsonl:{len(lines)}: invalid JSON" in skipped[0]


def test_corpus_text_keeps_line_separators_inside_an_abstract_and_counts_lines_at_line_ends(tmp_path):
    path = tmp_path / "seps.txt"
    path.write_bytes("Seps 2025 Papers\r\n\r\nWe propose X\u2028and Y\x85here.\r\n\r\nWe propose Z.\r\n".encode())
    papers, skipped = read(path)
    assert [(p.abstract, p.source.line) for p in papers] == [("We propose X\u2028and Y\x85here.", 3),
                                                            ("We propose Z.", 5)]
    assert skipped == []


def test_csv_cells_with_unicode_line_separators_keep_their_line_numbers(tmp_path):
    path = tmp_path / "seps.csv"
    path.write_bytes("id,abstract\r\nc1,We propose X\u2028and Y.\r\nc2,\r\nc3,We propose Z\x85.\r\n".encode())
    papers, skipped = read(path)
    assert [(p.id, p.source.line) for p in papers] == [("c1", 2), ("c3", 4)]
    assert len(skipped) == 1 and skipped[0].endswith("seps.csv:3: record has no abstract; skipped")
