"""Ingest: files, folders and globs in; ``Paper`` records out.

Formats, chosen by extension (``--format`` overrides):

- ``.txt``: the corpus format: a header line naming the collection
  ("ICLR 2026 Papers"), then one abstract per blank-line-separated block;
- ``.csv``: a header row with an ``abstract`` column and optionally ``title``,
  ``id``/``pid``, ``keywords``/``keyword``, ``authors``, ``year``, ``venue``,
  ``url``, ``decision`` (names matched case-insensitively);
- ``.jsonl``/``.ndjson``: one JSON object per line with at least ``abstract``; the
  arXiv metadata snapshot (``id``, ``title``, ``abstract``, ``authors``,
  ``categories``, ``update_date``) and OpenReview notes are understood;
- ``.json``: OpenReview API notes, v2 (``content.title.value``) or v1
  (``content.title``), as an API response ``{"notes": [...]}`` or a list;
- ``.bib``: BibTeX entries with an ``abstract`` field.

What a file's records lack, the command line can give them (:class:`FileSetting`, ``kg build
--set FILE KEY=VALUE``): a venue, a year, a decision, a URL template, a mapping of decision codes.

A record that cannot be read is reported as an ``InputError`` naming its file
and line; ``read_papers`` passes it to ``on_skip`` and goes on, unless
``strict`` is set. A NUL, or a CSV quote that swallows the rows after it, costs
one record; a file that is not UTF-8 text (gzip, zip, an image) is refused whole.

A record is a paper only if its abstract reads as one: an abstract that is a URL, a keyword list
or shorter than a sentence is skipped with that reason (:func:`abstract_problem`). A CSV row with
more fields than its header (a scraper's unquoted commas) is repaired where the repair is certain
and skipped otherwise (:mod:`kg.ingest.rows`); each repair is said to ``on_repair`` as a
:class:`Repaired` note, and :func:`ingest_summary` counts repairs and skips by reason.
"""
from __future__ import annotations

import ast
import csv
import fnmatch
import functools
import glob
import hashlib
import io
import itertools
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ..errors import InputError
from ..model import Paper, Source
from ..strings import counted
from ..text import clean, normalize_for_id, plain_label
from . import rows

#: Longer "abstracts" are whole papers or broken records; spaCy would also refuse texts past 1M characters.
MAX_ABSTRACT_CHARS = 100_000
_LINE_END = re.compile(r"\r\n|\r|\n")  # what ends a line in a text file; a form feed does not

FORMATS = ("txt", "csv", "jsonl", "openreview", "bibtex")
_EXTENSIONS = {".txt": "txt", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "openreview",
               ".bib": "bibtex", ".bibtex": "bibtex"}


def expand_inputs(inputs: Iterable[str | Path]) -> list[Path]:
    """Files named directly, the readable files inside folders, and glob matches, in order.

    Raises ``InputError`` for an input that matches nothing.
    """
    paths: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _EXTENSIONS)
        elif path.exists():
            found = [path]
        else:
            found = [Path(p) for p in sorted(glob.glob(str(item), recursive=True)) if Path(p).is_file()]
        if not found:
            raise InputError(str(item), None, f"no such file, or no {'/'.join(sorted(_EXTENSIONS))} files in it")
        paths.extend(p for p in found if p not in paths)
    return paths


def detect_format(path: Path) -> str:
    """The format of ``path`` by its extension."""
    try:
        return _EXTENSIONS[path.suffix.lower()]
    except KeyError:
        raise InputError(str(path), None, f"unknown extension {path.suffix!r}; use one of "
                         f"{', '.join(sorted(_EXTENSIONS))}, or name the format with --format") from None


#: What ``--set FILE KEY=VALUE`` can give a file's records, and what the value is.
SETTABLE = {
    "venue": "the venue, e.g. 'ICLR 2017'",
    "year": "the year of publication, e.g. 2017",
    "decision": "the decision on every paper of the file, as you would write it, e.g. 'Accept'",
    "decisions": "what the file's decision codes mean, e.g. '1=Accept (Oral);2=Accept (Poster);0=Reject'",
    "url": "a URL template where {id} is the record's id, e.g. 'https://openreview.net/forum?id={id}'",
}


@dataclass(frozen=True, slots=True)
class FileSetting:
    """A value given to every record of the input files ``pattern`` names (a path or a glob,
    matched against each input's path and its name), over what the record says itself.

    >>> setting = FileSetting.parse("ICLR17*.csv", "year=2017")
    >>> paper = Paper("p1", "We propose X.", year=None)
    >>> setting.applies_to(Path("data/ICLR17_submissions.csv")), setting.apply(paper).year
    (True, 2017)
    >>> FileSetting.parse("*", "decisions=1=Accept;0=Reject").apply(Paper("p1", "X.", decision="0")).decision
    'Reject'
    """

    pattern: str
    key: str
    value: str

    @classmethod
    def parse(cls, pattern: str, assignment: str) -> "FileSetting":
        """``pattern`` and ``KEY=VALUE``, checked; raises ``ValueError`` with a one-line reason."""
        key, equals, value = assignment.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not equals or key not in SETTABLE:
            raise ValueError(f"{assignment!r} is not KEY=VALUE with KEY one of {', '.join(SETTABLE)}")
        if not value:
            raise ValueError(f"{key} is given no value")
        if key == "year" and not (value.isdigit() and 1000 <= int(value) <= 2999):
            raise ValueError(f"year {value!r} is not a year such as 2017")
        if key == "url" and "{id}" not in value:
            raise ValueError(f"the url template {value!r} has no {{id}} to put each record's id in")
        if key == "decisions":
            cls._codes(value)
        return cls(pattern, key, value)

    @staticmethod
    @functools.lru_cache(maxsize=64)  # applied to every record of a file: parsed once
    def _codes(value: str) -> dict[str, str]:
        codes = {}
        for item in value.split(";"):
            code, equals, meaning = item.partition("=")
            if not equals or not code.strip() or not meaning.strip():
                raise ValueError(f"decisions {value!r}: {item!r} is not CODE=DECISION (items are separated by ';')")
            codes[code.strip()] = meaning.strip()
        return codes

    def applies_to(self, path: Path) -> bool:
        """Whether the input file ``path`` is one the pattern names."""
        return (fnmatch.fnmatchcase(str(path), self.pattern) or fnmatch.fnmatchcase(path.name, self.pattern)
                or Path(self.pattern).resolve() == path.resolve())

    def apply(self, paper: Paper) -> Paper:
        """``paper`` with this setting's field set (a code mapping changes only codes it knows)."""
        if self.key == "year":
            paper.year = int(self.value)
        elif self.key == "url":
            paper.url = self.value.replace("{id}", quote(paper.id, safe=""))
        elif self.key == "decisions":
            paper.decision = self._codes(self.value).get(paper.decision.strip(), paper.decision)
        else:
            setattr(paper, self.key, self.value)
        return paper


class Repaired(InputError):
    """Not an error: a record read after a certain repair (a CSV row's split column joined back),
    located and described like an error so that it can be listed and counted."""


def read_papers(
    inputs: Iterable[str | Path],
    *,
    format: str | None = None,
    strict: bool = False,
    on_skip: Callable[[InputError], None] | None = None,
    settings: Iterable[FileSetting] = (),
    on_repair: Callable[[Repaired], None] | None = None,
) -> Iterator[Paper]:
    """Every paper in ``inputs``, in file order, with the ``settings`` that name its file applied
    in the order given (a later one of the same key wins; a code mapping applies last).

    Unreadable records raise ``InputError`` when ``strict``; otherwise they are
    handed to ``on_skip`` and left out. A setting that names none of the inputs raises ``InputError``.
    A record kept after a repair is said to ``on_repair`` just before it is yielded.
    """
    on_repair = on_repair or (lambda repair: None)
    paths = expand_inputs(inputs)
    settings = sorted(settings, key=lambda setting: setting.key == "decisions")  # stable: codes mapped last
    for setting in settings:
        if not any(setting.applies_to(path) for path in paths):
            raise InputError(setting.pattern, None, f"--set {setting.key}: names none of the input files")
    for path in paths:
        reader = _READERS[format or detect_format(path)]
        ours = [setting for setting in settings if setting.applies_to(path)]
        try:
            repair = None  # the repair of the record that comes next, said only if that record is kept
            for record in reader(path):
                if isinstance(record, Repaired):
                    repair = record
                    continue
                if isinstance(record, Paper):
                    for setting in ours:
                        setting.apply(record)
                    record = _checked(record)
                if isinstance(record, InputError):
                    if strict or on_skip is None:
                        raise record
                    on_skip(record)
                else:
                    if repair is not None:
                        on_repair(repair)
                    yield record
                repair = None
        except InputError as error:  # the whole file is unreadable
            if strict or on_skip is None or error.file != str(path):
                raise
            on_skip(error)


def _checked(paper: Paper) -> Paper | InputError:
    """``paper``, or why it is not one: an abstract too long, a NUL, an abstract that is no abstract."""
    where = (paper.source.file, paper.source.line) if paper.source else (paper.id, None)
    if len(paper.abstract) > MAX_ABSTRACT_CHARS:
        return InputError(*where, f"abstract of {len(paper.abstract):,} characters is over the "
                                  f"{MAX_ABSTRACT_CHARS:,} an abstract can be (a whole paper?); skipped",
                          kind="abstract too long")
    if "\x00" in _text_of(paper):
        return InputError(*where, "contains a NUL character (binary data?); skipped", kind="a NUL character")
    problem = abstract_problem(paper.abstract)
    if problem:
        shown = paper.abstract if len(paper.abstract) <= 60 else paper.abstract[:59] + "…"
        return InputError(*where, f"{problem} ({shown!r}), not an abstract; skipped", kind=problem)
    return paper


#: A keyword has at most this many words ("optimistic FTRL with self-concordant regularizers").
_KEYWORD_WORDS = 6


def abstract_problem(abstract: str) -> str | None:
    """Why ``abstract`` is not a paper's abstract, in a few words, or None.

    A scrape whose columns shifted puts a URL or the keywords where the abstract goes; an empty
    form field leaves "TBD". None of them is a paper to extract from. A keyword list is two or more
    comma- or semicolon-separated items of at most six words, each with a letter (a list of numbers
    is data, not keywords) and none starting with "and" or "or" (that is prose), with no sentence end
    ('.', '!' or '?' before a space or the end). Shorter than a sentence is one word. Short texts
    that are not lists ("1, 2", "Deep learning for vision") are kept: what reads as no sentence to a
    person can still be a record's whole abstract, and extraction copes with it. Each test is one
    pass over the text.

    >>> abstract_problem("https://openreview.net/forum?id=KvPwXVcslY")
    'abstract is a URL'
    >>> abstract_problem("object recognition,critical band masking,shape bias")
    'abstract is a keyword list'
    >>> abstract_problem("TBD")
    'abstract is shorter than a sentence'
    >>> abstract_problem("We propose X."), abstract_problem("We use 1, 2, 3 and 4"), abstract_problem("X, Y, and Z")
    (None, None, None)
    """
    text = abstract.strip()
    if rows.looks_like_url(text) or (text.startswith("www.") and not any(c.isspace() for c in text)):
        return "abstract is a URL"
    if len(text.split()) < 2:
        return "abstract is shorter than a sentence"
    items = [item.split() for item in _LIST_SEPARATOR.split(text)]
    if (len(items) >= 2 and _SENTENCE_END.search(text) is None
            and all(0 < len(words) <= _KEYWORD_WORDS and any(c.isalpha() for w in words for c in w) for words in items)
            and not any(words[0] in ("and", "or") for words in items)):
        return "abstract is a keyword list"
    return None


_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")  # one character and one more: linear
_LIST_SEPARATOR = re.compile(r"[,;]")


def ingest_summary(repaired: list[Repaired], skipped: list[InputError]) -> list[str]:
    """The lines a build's summary ends with: the records repaired and those skipped, counted by
    reason, each reason with where its first records are.

    >>> print("\\n".join(ingest_summary([Repaired("a.csv", 3, "x", kind="abstract split at unquoted commas")],
    ...                                 [InputError("a.csv", 5, "y", kind="abstract is a URL")] * 2)))
    Repaired 1 record: 1 abstract split at unquoted commas (a.csv:3)
    Skipped 2 records: 2 abstract is a URL (a.csv:5, a.csv:5)
    """
    lines = []
    for verb, records in (("Repaired", repaired), ("Skipped", skipped)):
        if records:
            lines.append(f"{verb} {counted(len(records), 'record')}: " + _by_kind(records))
    return lines


def _by_kind(records: list[InputError], examples: int = 3) -> str:
    """'139 abstract split at unquoted commas (oral.csv:12, ...), 2 other' , largest count first."""
    kinds: dict[str, list[InputError]] = {}
    for record in records:
        kinds.setdefault(record.kind or "other reasons (listed above)", []).append(record)
    return ", ".join(
        f"{len(group):,} {kind} ({', '.join(f'{Path(r.file).name}:{r.line}' for r in group[:examples])}"
        + (", …" if len(group) > examples else "") + ")"
        for kind, group in sorted(kinds.items(), key=lambda item: -len(item[1])))


def _text_of(paper: Paper) -> str:
    """Every text a paper keeps, joined."""
    return "\n".join([paper.id, paper.abstract, paper.title, paper.venue, paper.url, paper.decision,
                      *paper.authors, *paper.keywords])


def paper_id(abstract: str) -> str:
    """A stable id derived from the abstract: the same text gives the same id in every run.

    >>> paper_id("We propose X.") == paper_id("we  propose **X**.")
    True
    """
    return "a" + hashlib.sha1(normalize_for_id(abstract).encode()).hexdigest()[:15]


def venue_from_header(header: str) -> str:
    """The venue named by a corpus header line.

    >>> venue_from_header("ICLR 2026 Papers")
    'ICLR 2026'
    """
    return re.sub(r"\s+(papers|abstracts|submissions)\s*$", "", header.strip(), flags=re.I)


def _year(text: str) -> int | None:
    found = re.search(r"\b(19|20)\d\d\b", text or "")
    return int(found.group()) if found else None


#: Signatures of files that are not text, whatever their extension says.
_SIGNATURES = {b"\x1f\x8b": "gzip data", b"PK\x03\x04": "a zip archive, or an Excel workbook",
               b"\x89PNG": "a PNG image", b"%PDF-": "a PDF", b"\xff\xfe": "UTF-16 text", b"\xfe\xff": "UTF-16 text"}
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1f]")  # no text has many; tab, line ends and form feed excepted


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    head = data[:8192]
    kind = next((kind for magic, kind in _SIGNATURES.items() if head.startswith(magic)), None)
    # A share of control bytes, not any one: a stray NUL costs its record (see read_papers), not the file.
    controls = len(_CONTROL_BYTES.findall(head))
    if kind is None and controls * 20 > len(head):
        kind = f"{controls:,} control bytes in its first {len(head):,}"
    if kind:
        raise InputError(str(path), None, f"binary file ({kind}); expected UTF-8 text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputError(str(path), line, f"not valid UTF-8 (byte 0x{data[error.start]:02x}); "
                         f"re-save the file as UTF-8") from None


def _read_corpus_txt(path: Path) -> Iterator[Paper | InputError]:
    lines = _LINE_END.split(_read_text(path))
    if not any(line.strip() for line in lines):
        raise InputError(str(path), None, "empty file")
    header_index = next(i for i, line in enumerate(lines) if line.strip())
    venue = venue_from_header(lines[header_index])
    block: list[str] = []
    block_line = 0
    for number, line in enumerate(lines[header_index + 1 :] + [""], start=header_index + 2):
        if line.strip():
            if not block:
                block_line = number
            block.append(line)
        elif block:
            abstract = "\n".join(block).strip()
            yield Paper(id=paper_id(abstract), abstract=abstract, venue=venue, year=_year(venue),
                        source=Source(str(path), block_line))
            block = []


def _keywords(value) -> list[str]:
    if isinstance(value, list):
        return _names(value)
    text = str(value or "").strip()
    if text.startswith("["):
        try:
            return _names(ast.literal_eval(text))
        except (ValueError, SyntaxError):
            pass
    return _names(re.split(r"[;,]", text))


def _authors(value) -> list[str]:
    return _names(value if isinstance(value, list) else re.split(r";|\band\b|,", str(value or "")))


def _names(values) -> list[str]:
    return [name for name in (plain_label(str(v)) for v in values) if name]


def _openreview_fields(note: dict) -> dict:
    """An OpenReview note's fields, flattened: v2 wraps each value as ``{"value": ...}``, v1 does not."""
    fields = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in (note.get("content") or {}).items()}
    fields["id"] = note.get("id") or note.get("forum") or ""
    if note.get("cdate") and not fields.get("year"):
        fields["year"] = time.gmtime(note["cdate"] / 1000).tm_year
    if fields["id"] and not fields.get("url"):
        fields["url"] = f"https://openreview.net/forum?id={fields['id']}"
    return fields


def _arxiv_fields(record: dict) -> dict:
    """An arXiv metadata snapshot record: categories become keywords, update_date the year."""
    fields = dict(record)
    fields["keywords"] = str(record.get("categories") or "").split()
    fields.setdefault("venue", "arXiv")
    fields.setdefault("year", str(record.get("update_date") or "")[:4])
    if record.get("id"):
        fields.setdefault("url", f"https://arxiv.org/abs/{record['id']}")
    return fields


def _paper_from_record(record: dict, source: Source) -> Paper | InputError:
    if isinstance(record.get("content"), dict):
        record = _openreview_fields(record)
    elif "categories" in record and "update_date" in record:
        record = _arxiv_fields(record)
    fields = {str(k).strip().lower(): v for k, v in record.items() if k is not None}
    abstract = str(fields.get("abstract") or "").strip()
    if not abstract:
        return InputError(source.file, source.line, "record has no abstract; skipped", kind="no abstract")
    source_id = str(fields.get("id") or fields.get("pid") or fields.get("paper_id") or "").strip()
    venue = str(fields.get("venue") or "").strip()
    year = fields.get("year")
    try:
        year = int(year) if year not in (None, "") else _year(venue)
    except (TypeError, ValueError):
        year = _year(str(year))
    return Paper(
        id=source_id or paper_id(abstract),
        abstract=abstract,
        title=plain_label(str(fields.get("title") or "")),
        venue=venue,
        year=year,
        authors=_authors(fields.get("authors")),
        keywords=_keywords(fields.get("keywords", fields.get("keyword"))),
        url=str(fields.get("url") or fields.get("link") or "").strip(),
        decision=plain_label(str(fields.get("decision") or "")),
        source=source,
    )


def _read_csv(path: Path) -> Iterator[Paper | InputError]:
    # Rows end at \n, \r or \r\n only: str.splitlines would also end one at a form feed or
    # \x1c inside a cell, and every line number after it would be off.
    lines = io.StringIO(_read_text(path), newline="").readlines()
    reader = csv.reader(lines)
    header = next(reader, [])
    if "abstract" not in {name.strip().lower() for name in header}:
        raise InputError(str(path), 1, f"no 'abstract' column (columns: {', '.join(header)})")
    columns = [name.strip().lower() for name in header]
    for line, row in _csv_rows(str(path), lines, reader.line_num, columns):
        if isinstance(row, rows.Repair):
            yield Repaired(str(path), line, row.describe(), kind=row.kind())
            row = row.values
        if isinstance(row, InputError):
            yield row
        else:
            yield _paper_from_record(dict(zip(header, row)), Source(str(path), line))


def _csv_rows(file: str, lines: list[str], first: int,
              columns: list[str]) -> Iterator[tuple[int, list[str] | rows.Repair | InputError]]:
    """(line number, fields) for each row of ``lines[first:]``; a row with more fields than
    ``columns`` comes repaired (:func:`kg.ingest.rows.repair`), or as an ``InputError`` saying why not.

    A row whose quotes went wrong comes as an ``InputError``, and reading starts again at the line
    after the one it started on: the rows a quote left open swallowed are read as themselves.
    """
    width = len(columns)
    start = first
    while start < len(lines):
        reader = csv.reader(itertools.islice(lines, start, None))
        begin = start  # the index of the line the next row starts on
        while True:
            try:
                fields = next(reader)
                raw = lines[begin : start + reader.line_num]
                if len(fields) > width and not any(_is_row(line, width) for line in raw[1:]):
                    # Unquoted commas split a column (a quote left open would have swallowed rows instead).
                    yield begin + 1, _repaired(file, begin + 1, columns, fields, "".join(raw))
                    begin = start + reader.line_num
                    continue
                problem = _quote_problem(raw, fields, width)
            except StopIteration:
                return
            except csv.Error as error:  # a field past csv's size limit (a quote left open), or a NUL on Python 3.10
                problem = f"unreadable row ({error})"
            if problem:
                yield begin + 1, InputError(file, begin + 1, f"{problem}; skipped, reading on at line {begin + 2}",
                                            kind="a misplaced quote")
                start = begin + 1
                break
            if fields:
                yield begin + 1, fields
            begin = start + reader.line_num


def _repaired(file: str, line: int, columns: list[str], fields: list[str], raw: str) -> rows.Repair | InputError:
    """A row with more fields than its header, repaired, or skipped saying why the repair is uncertain."""
    outcome = rows.repair(columns, fields, raw)
    if isinstance(outcome, str):
        return InputError(file, line, f"{outcome}; skipped", kind="more fields than the header, where they belong uncertain")
    return outcome


def _quote_problem(lines: list[str], fields: list[str], width: int) -> str | None:
    """Why the row read from ``lines`` as ``fields`` looks broken by a misplaced quote, or None.

    csv forgives a quote that ends a field early ("A "b" c" reads as 'A b" c"'), which costs a
    quote character when the row is otherwise whole. But a quote left open swallows the delimiters
    and row breaks after it until some later quote, so a title absorbs an abstract, or one field
    holds several rows. A row strict CSV rejects is reported when that shows: its fields no longer
    match the header, or a line it swallowed reads as a whole row by itself. A legitimate
    multi-line quoted abstract passes strict CSV, and its later lines are prose, not rows.
    """
    try:
        list(csv.reader(lines, strict=True))
        return None
    except csv.Error as error:
        reason = f"a misplaced quote ({error})"
    if len(fields) != width:
        return f"{reason}: {counted(len(fields), 'field')} where the header has {width}"
    swallowed = sum(_is_row(line, width) for line in lines[1:])
    if swallowed:
        return f"{reason}: a quoted field runs on over {swallowed} line{'s' * (swallowed > 1)} that read as rows"
    return None


def _is_row(line: str, width: int) -> bool:
    try:
        return [len(row) for row in csv.reader([line], strict=True)] == [width]
    except csv.Error:
        return False


#: What a control character decoded from a JSON string becomes: the ones that separate words (vertical
#: tab, form feed, the information separators U+001C-U+001F) a space, the others (NUL, BEL, ESC ...)
#: nothing. Tab, line feed and carriage return stay: they are the text's own white space.
_JSON_CONTROLS = {code: (" " if code in (0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x1F) else None)
                  for code in range(0x20) if code not in (0x09, 0x0A, 0x0D)}


#: Why JSON nested past Python's recursion limit (arrays in arrays, a thousand deep) is not read.
_TOO_DEEP = "JSON nested too deeply to read (arrays or objects about a thousand levels deep)"


def _without_controls(value):
    """``value`` decoded from JSON, with the control characters of its strings (keys and values, at
    any depth) dropped or made spaces (:data:`_JSON_CONTROLS`).

    JSON can only hold them escaped (``\\u0000``): an exporter wrote them on purpose or carried them
    over from a PDF, and the record around them is good. Raw in a text file, a NUL is a sign of binary
    data and costs its record (see :func:`read_papers`); escaped in JSON, it costs the character.

    >>> _without_controls({"abstract": "We\\u0000 propose X\\u0007.\\fNext", "n": [1, "a\\u001bb"]})
    {'abstract': 'We propose X. Next', 'n': [1, 'ab']}
    """
    if isinstance(value, str):
        return value.translate(_JSON_CONTROLS)
    if isinstance(value, dict):
        return {_without_controls(key): _without_controls(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_controls(item) for item in value]
    return value


def _read_jsonl(path: Path) -> Iterator[Paper | InputError]:
    # Lines end at \n only, as JSON Lines says: str.splitlines would also end one at U+2028, U+2029
    # or U+0085, which json.dumps(ensure_ascii=False) writes raw inside strings. A \r before the \n
    # is JSON whitespace.
    for number, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = _without_controls(json.loads(line))
        except json.JSONDecodeError as error:
            yield InputError(str(path), number, f"invalid JSON ({error.msg}: column {error.colno}); skipped",
                             kind="invalid JSON")
            continue
        except RecursionError:  # json's own limit, or ours just under it
            yield InputError(str(path), number, f"{_TOO_DEEP}; skipped")
            continue
        if not isinstance(record, dict):
            yield InputError(str(path), number, "expected a JSON object per line; skipped")
            continue
        yield _paper_from_record(record, Source(str(path), number))


def _read_openreview(path: Path) -> Iterator[Paper | InputError]:
    text = _read_text(path)
    try:
        document = _without_controls(json.loads(text))
    except json.JSONDecodeError as error:
        raise InputError(str(path), error.lineno, f"invalid JSON ({error.msg}: column {error.colno})") from None
    except RecursionError:
        raise InputError(str(path), None, _TOO_DEEP) from None
    notes = document.get("notes") if isinstance(document, dict) else document
    if not isinstance(notes, list):
        raise InputError(str(path), 1, "expected OpenReview notes: a list, or an object with a 'notes' list")
    for number, note in enumerate(notes, start=1):
        # Records are numbered: a JSON document's lines say little about which note is meant.
        source = Source(f"{path}#note", number)
        if not isinstance(note, dict):
            yield InputError(source.file, number, "expected a note object; skipped")
        else:
            yield _paper_from_record(note, source)


def _read_bibtex(path: Path) -> Iterator[Paper | InputError]:
    import bibtexparser

    library = bibtexparser.parse_string(_read_text(path))
    for block in library.failed_blocks:
        yield InputError(str(path), block.start_line + 1, f"unreadable BibTeX entry ({type(block).__name__}); skipped")
    for entry in library.entries:
        fields = {k.lower(): str(v.value) for k, v in entry.fields_dict.items()}
        fields["id"] = entry.key
        # Titles are shown as they read ("A {GRPO} study" -> "A GRPO study"); the abstract keeps its
        # markup, which extraction cleans while keeping offsets into the original.
        fields["title"] = clean(fields.get("title", "")).text
        fields.setdefault("venue", fields.get("booktitle") or fields.get("journal") or "")
        fields["authors"] = [a.strip() for a in fields.get("author", "").split(" and ") if a.strip()]
        yield _paper_from_record(fields, Source(str(path), entry.start_line + 1))


_READERS: dict[str, Callable[[Path], Iterator[Paper | InputError]]] = {
    "txt": _read_corpus_txt,
    "csv": _read_csv,
    "jsonl": _read_jsonl,
    "openreview": _read_openreview,
    "bibtex": _read_bibtex,
}
