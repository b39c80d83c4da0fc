"""Ingest keeps every record it can read and names the ones it cannot: odd line separators, NUL bytes,
binary files and broken CSV quoting each cost one record at most, reported as file:line."""
import gzip
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


# --- item 12: NUL bytes are a record's problem; binary files are the file's ------------------------

def sixty_rows(nul_row: int) -> str:
    rows = [f"p{n},Title {n},We propose method {n} and test it on benchmark {n}. " + "More words. " * 12
            for n in range(60)]  # 12 KB: row 1 is in the first 8 KB, row 59 after it
    rows[nul_row] = rows[nul_row].replace("method", "meth\x00od")
    return "id,title,abstract\n" + "\n".join(rows) + "\n"


@pytest.mark.parametrize("nul_row", [1, 59])
def test_a_nul_in_one_csv_record_skips_that_record_only(tmp_path, nul_row):
    path = tmp_path / "nul.csv"
    path.write_text(sixty_rows(nul_row), encoding="utf-8")
    papers, skipped = read(path)
    assert len(papers) == 59 and f"p{nul_row}" not in {p.id for p in papers}
    assert len(skipped) == 1 and skipped[0].startswith(f"{path}:{nul_row + 2}: ") and "NUL" in skipped[0]
    with pytest.raises(InputError, match=rf"nul\.csv:{nul_row + 2}: .*NUL"):
        list(read_papers([path], strict=True))


def test_a_raw_nul_in_one_jsonl_line_or_text_block_skips_that_record_only(tmp_path):
    jsonl = tmp_path / "nul.jsonl"
    jsonl.write_text('{"abstract": "We propose A."}\n{"abstract": "We \x00propose B."}\n'
                     '{"abstract": "We propose C."}\n', encoding="utf-8")
    papers, skipped = read(jsonl)
    assert [p.source.line for p in papers] == [1, 3]
    assert [message.split(": ")[0] for message in skipped] == [f"{jsonl}:2"]
    text = tmp_path / "nul.txt"
    text.write_text("Nul 2025 Papers\n\nWe propose A.\n\nWe \x00propose B.\n\nWe propose C.\n", encoding="utf-8")
    papers, skipped = read(text)
    assert [p.source.line for p in papers] == [3, 7]
    assert len(skipped) == 1 and skipped[0].startswith(f"{text}:5: ") and "NUL" in skipped[0]


@pytest.mark.parametrize("content, kind", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10", "PNG"),
    (gzip.compress(b"id,abstract\np1,We propose X.\n" * 50), "gzip"),
    (b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)) * 4, "zip"),
    ("id,abstract\np1,We propose X.\n".encode("utf-16"), "UTF-16"),
    (bytes(range(256)) * 40, "binary"),  # no known signature, mostly not text
    (b"id,abstract\n" + b"\x00\x01\x02\x03 binary junk\n" * 20, "binary"),  # valid UTF-8, but not text
], ids=["png", "gzip", "zip", "utf-16", "random", "controls"])
def test_binary_files_are_rejected_in_one_line_naming_the_file(tmp_path, content, kind):
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    papers, skipped = read(path)
    assert papers == [] and len(skipped) == 1
    assert skipped[0].startswith(f"{path}: ") and kind in skipped[0] and "\n" not in skipped[0]
    with pytest.raises(InputError, match=kind):
        list(read_papers([path], strict=True))


# --- item 13: a quote that swallows a row break -----------------------------------------------------

def write_csv(tmp_path, text, name="quotes.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def test_a_quote_left_open_is_reported_at_its_line_and_the_rows_it_swallowed_are_read(tmp_path):
    path = write_csv(tmp_path, 'id,title,abstract\n'
                               'p1,One,We propose A.\n'
                               'p2,"Stray title,We propose B.\n'
                               'p3,Three,We propose C.\n'
                               'p4,"Four","We propose D, in a quoted abstract."\n')
    papers, skipped = read(path)
    assert [(p.id, p.title, p.abstract, p.source.line) for p in papers] == [
        ("p1", "One", "We propose A.", 2), ("p3", "Three", "We propose C.", 4),
        ("p4", "Four", "We propose D, in a quoted abstract.", 5)]
    assert len(skipped) == 1 and skipped[0].startswith(f"{path}:3: ") and "quote" in skipped[0]
    assert "\n" not in skipped[0]
    with pytest.raises(InputError, match=r"quotes\.csv:3: .*quote"):
        list(read_papers([path], strict=True))


def test_a_quote_left_open_to_the_end_of_the_file_loses_only_its_own_record(tmp_path):
    path = write_csv(tmp_path, 'id,title,abstract\np1,One,We propose A.\np2,Two,"We propose B.\n'
                               'p3,Three,We propose C.\np4,Four,We propose D.\n')
    papers, skipped = read(path)
    assert [(p.id, p.source.line) for p in papers] == [("p1", 2), ("p3", 4), ("p4", 5)]
    assert len(skipped) == 1 and skipped[0].startswith(f"{path}:3: ")


def test_a_quote_left_open_before_a_large_rest_of_file_is_reported_not_a_traceback(tmp_path):
    # The open field grows past csv's field size limit (131,072 characters), which raised csv.Error.
    rows = [f"p{n},Title {n},We propose method {n}. " + "Filler words. " * 20 for n in range(600)]
    rows[1] = rows[1].replace("Title 1", '"Title 1')
    path = write_csv(tmp_path, "id,title,abstract\n" + "\n".join(rows) + "\n")
    papers, skipped = read(path)
    assert len(papers) == 599 and "p1" not in {p.id for p in papers}
    assert len(skipped) == 1 and skipped[0].startswith(f"{path}:3: ")


def test_a_quote_inside_a_quoted_title_that_shifts_the_columns_is_reported(tmp_path):
    # Before: title 'A quoted" title', abstract ' with comma"', the real abstract dropped as an extra column.
    path = write_csv(tmp_path, 'id,title,abstract\np1,"A "quoted" title, with comma",We propose X.\n'
                               'p2,Two,We propose Y.\n')
    papers, skipped = read(path)
    assert [(p.id, p.source.line) for p in papers] == [("p2", 3)]
    assert len(skipped) == 1 and skipped[0].startswith(f"{path}:2: ") and "3" in skipped[0]


def test_multi_line_quoted_abstracts_are_read_whole(tmp_path):
    path = write_csv(tmp_path, 'id,title,abstract\r\n'
                               'p1,"Multi, line","We propose X.\r\n\r\nA second paragraph, with commas, and ""quotes"".\r\n'
                               'p9,not,a row: it is inside the abstract"\r\n'
                               'p2,Two,We propose Y.\r\n'
                               'p3,"Three","First line, we propose Z.\nSecond, line, here."\r\n')
    papers, skipped = read(path)
    assert skipped == []
    assert [(p.id, p.source.line) for p in papers] == [("p1", 2), ("p2", 6), ("p3", 7)]
    assert papers[0].abstract == ('We propose X.\r\n\r\nA second paragraph, with commas, and "quotes".\r\n'
                                  'p9,not,a row: it is inside the abstract')
    assert papers[2].abstract == "First line, we propose Z.\nSecond, line, here."


def test_a_multi_line_abstract_with_undoubled_quotes_is_still_read(tmp_path):
    # Not valid CSV ("X" should be ""X""), but nothing after it is swallowed: it is read as before.
    path = write_csv(tmp_path, 'id,title,abstract\np1,One,"We propose X.\nWe call it "X" here."\np2,Two,We propose Y.\n')
    papers, skipped = read(path)
    assert skipped == []
    assert [(p.id, p.source.line) for p in papers] == [("p1", 2), ("p2", 4)]
    assert papers[0].abstract == 'We propose X.\nWe call it X" here."'


def test_a_quote_that_only_ends_a_field_early_or_a_short_multi_line_row_is_still_read(tmp_path):
    # '"Attention" is all' is not valid CSV, but its row is whole; a row may leave out trailing columns.
    path = write_csv(tmp_path, 'id,title,abstract,keywords\np1,"Attention" is all you need,We propose X.,nlp\n'
                               'p2,Two,"We propose Y.\nOn two lines, with, commas."\np3,Three,We propose Z.,cv\n')
    papers, skipped = read(path)
    assert skipped == []
    assert [(p.id, p.title, p.source.line) for p in papers] == [("p1", "Attention is all you need", 2),
                                                               ("p2", "Two", 3), ("p3", "Three", 5)]


# --- a control character escaped in a JSON string costs the character, not the record ---------------

def test_an_escaped_nul_or_control_in_a_jsonl_string_is_dropped_and_the_record_kept(tmp_path):
    path = tmp_path / "escaped.jsonl"
    path.write_text('{"id": "n1", "abstract": "We \\u0000propose A\\u001b[31m.", "title": "Title\\u0007 one"}\n'
                    '{"id": "n2", "abstract": "We propose B.\\u000cNext\\u001fpart.\\r\\nTab\\there.",'
                    ' "keywords": ["k\\u0000w"], "authors": ["A\\u0000da"]}\n', encoding="utf-8")
    papers, skipped = read(path)
    assert skipped == []
    assert [(p.id, p.abstract, p.title) for p in papers] == [
        ("n1", "We propose A[31m.", "Title one"),
        ("n2", "We propose B. Next part.\r\nTab\there.", "")]
    assert (papers[1].keywords, papers[1].authors) == (["kw"], ["Ada"])


def test_an_escaped_nul_in_openreview_notes_is_dropped_and_every_note_kept(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"notes": [
        {"id": "o1", "content": {"title": {"value": "One\x00"}, "abstract": {"value": "We propose\x00 X."}}},
        {"id": "o2", "content": {"title": {"value": "Two"}, "abstract": {"value": "We propose Y.\x1b"}}}]}),
        encoding="utf-8")  # json.dumps writes each control as a \\u escape
    papers, skipped = read(path)
    assert skipped == [] and [(p.id, p.title, p.abstract) for p in papers] == [
        ("o1", "One", "We propose X."), ("o2", "Two", "We propose Y.")]


def test_json_nested_too_deeply_costs_its_record_not_the_build(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"abstract": "We propose A."}\n{"abstract": "We propose B.", "x": ' + "[" * 5000 + "]" * 5000 + '}\n'
                    '{"abstract": "We propose C."}\n', encoding="utf-8")
    papers, skipped = read(path)
    assert [p.abstract for p in papers] == ["We propose A.", "We propose C."]
    assert len(skipped) == 1 and skipped[0].startswith(f"{path}:2: JSON nested too deeply")


# --- dirty scrapes: unquoted commas split a column; a record whose abstract is not one ------------

SCRAPE_HEADER = "paper_id,title,link,keywords,abstract\n"


def read_noting_repairs(path, **options):
    skipped, repaired = [], []
    papers = list(read_papers([path], on_skip=skipped.append, on_repair=repaired.append, **options))
    return papers, [str(error) for error in skipped], repaired


def test_an_abstract_split_at_unquoted_commas_is_joined_back_with_its_quotes(tmp_path):
    # The scraper quoted the abstract but not the quotes inside it: csv ends the field at '"optimism',
    # and every later comma starts a field.
    path = write_csv(tmp_path, SCRAPE_HEADER
                     + 'p1,One,https://openreview.net/forum?id=p1,"bandits,regret","We use the "optimism" principle, '
                       'with smaller sets, and prove bounds."\n'
                     + 'p2,Two,https://openreview.net/forum?id=p2,"a,b","We propose Y, a model. It works."\n',
                     name="scrape.csv")
    papers, skipped, repaired = read_noting_repairs(path)
    assert skipped == []
    assert [(p.id, p.title, p.keywords, p.url) for p in papers] == [
        ("p1", "One", ["bandits", "regret"], "https://openreview.net/forum?id=p1"),
        ("p2", "Two", ["a", "b"], "https://openreview.net/forum?id=p2")]
    assert papers[0].abstract == 'We use the "optimism" principle, with smaller sets, and prove bounds.'
    assert [(str(note), note.kind) for note in repaired] == [
        (f"{path}:2: abstract split at 2 unquoted commas, joined back", "abstract split at unquoted commas")]


def test_a_title_split_at_commas_is_joined_back_where_the_link_shows_how_far_the_fields_shifted(tmp_path):
    path = write_csv(tmp_path, SCRAPE_HEADER
                     + 'p1,Spatial channels, shape bias, and robustness,https://openreview.net/forum?id=p1,'
                       '"object recognition,shape bias","What do networks use? We ask, and answer."\n'
                     + 'p2,Fair, fast, and "good" clustering,https://openreview.net/forum?id=p2,"clustering",'
                       '"We propose "FFC", a method, for clustering."\n',
                     name="scrape.csv")
    papers, skipped, repaired = read_noting_repairs(path)
    assert skipped == []
    assert [(p.title, p.url, p.keywords, p.abstract) for p in papers] == [
        ("Spatial channels, shape bias, and robustness", "https://openreview.net/forum?id=p1",
         ["object recognition", "shape bias"], "What do networks use? We ask, and answer."),
        ('Fair, fast, and "good" clustering', "https://openreview.net/forum?id=p2", ["clustering"],
         'We propose "FFC", a method, for clustering.')]
    assert [note.kind for note in repaired] == ["title split at unquoted commas",
                                                "title and abstract split at unquoted commas"]


def test_a_piece_that_starts_with_a_quote_does_not_make_a_cleanly_quoted_column_a_suspect(tmp_path):
    # After 'especially when', the next piece starts with a quote: it reads as a quoted field, but the
    # keywords before it were quoted whole, so only the abstract can have split.
    path = write_csv(tmp_path, SCRAPE_HEADER
                     + 'p1,One,https://openreview.net/forum?id=p1,"anomaly detection,batch norm","We adapt detectors, '
                       '"zero-shot" here, to drift."\n', name="scrape.csv")
    papers, skipped, _ = read_noting_repairs(path)
    assert skipped == [] and papers[0].abstract == 'We adapt detectors, "zero-shot" here, to drift.'
    assert papers[0].keywords == ["anomaly detection", "batch norm"]


def test_a_row_whose_extra_fields_could_belong_to_two_columns_is_skipped_saying_so(tmp_path):
    # No link to anchor the fields, and both title and abstract are unquoted: either could hold the comma.
    path = write_csv(tmp_path, "id,title,abstract\np1,A title, with a comma,We propose X.\n"
                               "p2,Two,We propose Y, a model.\np3,\"Quoted, title\",We propose Z, a model.\n",
                     name="plain.csv")
    papers, skipped, repaired = read_noting_repairs(path)
    assert [(p.id, p.title, p.abstract) for p in papers] == [("p3", "Quoted, title", "We propose Z, a model.")]
    assert skipped == [f"{path}:2: 4 fields where the header has 3: the 1 extra could belong to title or abstract, "
                       "so which is uncertain; skipped",
                       f"{path}:3: 4 fields where the header has 3: the 1 extra could belong to title or abstract, "
                       "so which is uncertain; skipped"]
    assert [str(note) for note in repaired] == [f"{path}:4: abstract split at 1 unquoted comma, joined back"]
    with pytest.raises(InputError, match=r"plain\.csv:2: .*uncertain"):
        list(read_papers([path], strict=True))


def test_a_row_with_two_fields_that_look_like_its_link_is_skipped(tmp_path):
    path = write_csv(tmp_path, SCRAPE_HEADER + 'p1,See https://a.org/x,https://b.org/y,https://openreview.net/forum?id=p1,'
                                               '"k","We propose X."\n', name="scrape.csv")
    papers, skipped, _ = read_noting_repairs(path)
    assert papers == [] and skipped == [f"{path}:2: 6 fields where the header has 5, and 2 of them look like its link; skipped"]


def test_a_repaired_row_is_kept_under_strict(tmp_path):
    path = write_csv(tmp_path, SCRAPE_HEADER + 'p1,A, B,https://openreview.net/forum?id=p1,"k","We propose X, a model."\n',
                     name="scrape.csv")
    [paper] = read_papers([path], strict=True)
    assert (paper.title, paper.abstract) == ("A, B", "We propose X, a model.")


@pytest.mark.parametrize("abstract, reason", [
    ("https://openreview.net/forum?id=p1", "abstract is a URL"),
    ("www.example.org/paper.pdf", "abstract is a URL"),
    ("object recognition,critical band masking,spatial-frequency channels", "abstract is a keyword list"),
    ("chain-of-thought; language models; reasoning", "abstract is a keyword list"),
    ("TBD", "abstract is shorter than a sentence"),
    ("N/A", "abstract is shorter than a sentence"),
])
def test_a_record_whose_abstract_is_a_url_a_keyword_list_or_no_sentence_is_skipped_with_why(tmp_path, abstract, reason):
    kept = {"p2": "Something else.", "p3": "We study graph neural networks, transformers, and their limits on "
                                          "molecules, proteins and materials",  # abstracts, short or unfinished
            "p4": "We use 1, 2, 3 and 4"}
    csv_path = write_csv(tmp_path, "id,abstract\n" + "".join(f'{i},"{a}"\n' for i, a in {"p1": abstract, **kept}.items()),
                         name="odd.csv")
    jsonl_path = tmp_path / "odd.jsonl"
    jsonl_path.write_text("".join(json.dumps({"id": i, "abstract": a}) + "\n" for i, a in {"p1": abstract, **kept}.items()),
                          encoding="utf-8")
    for path in (csv_path, jsonl_path):
        skipped = []
        papers = list(read_papers([path], on_skip=skipped.append))
        assert {p.id: p.abstract for p in papers} == kept
        assert len(skipped) == 1 and skipped[0].kind == reason and str(skipped[0]).startswith(f"{path}:")
        assert f"{reason} ('{abstract[:40]}" in str(skipped[0]) and str(skipped[0]).endswith("), not an abstract; skipped")
