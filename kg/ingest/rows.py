"""CSV rows with more fields than their header: given back their columns where that is certain.

Scrapers write free text without quoting it, so an unquoted comma splits a title or an abstract
into extra fields, and every field after it shifts. Python's ``csv`` cannot know which column the
extra fields belong to; the row's own text sometimes can. A row is repaired only when exactly one
column can have taken the extra fields:

- **Anchors.** A URL column (``url``, ``link``) holds a URL: the one field, at or after its column,
  that looks like one shows how far the fields before it shifted. With none it pins nothing; with
  two, the row is uncertain.
- **Between anchors**, the extra fields belong to a column that holds free text (``id``, ``pid``,
  ``paper_id``, ``year`` and URL columns hold no comma). A column that the raw text shows was
  quoted cleanly (``"a, b",`` : a closing quote right before the comma) cannot have split, and
  neither can an empty one, nor can such a field begin a split value. If exactly one free-text
  column can take the extra fields, with every other free-text column of the stretch then on such
  a field, it takes them; otherwise the row is skipped.

The column that takes them back gets its raw text (from its first field to its last), its enclosing
quotes removed: ``"A "quoted" claim, and more"`` reads back whole, where joining csv's fields with
commas would lose the quote csv took as the end of the field.

Every step is one pass over the row's text: a row costs time linear in its length.
"""
from __future__ import annotations

from dataclasses import dataclass

#: Columns whose value is a URL: where such a value lies shows how far the fields before it shifted.
URL_COLUMNS = frozenset({"url", "link"})
#: Columns that hold no comma, so no extra field is theirs.
NO_COMMAS = URL_COLUMNS | {"id", "pid", "paper_id", "year"}


@dataclass(frozen=True, slots=True)
class Field:
    """Where one field lies in a row's raw text, and whether it was quoted cleanly (opened with a
    quote, closed with one right before the next comma or the row's end)."""

    start: int
    end: int
    clean: bool

    def pinned(self) -> bool:
        """Whether this field cannot be a piece of a longer value split at a comma."""
        return self.clean or self.start == self.end


@dataclass(frozen=True, slots=True)
class Repair:
    """A row given back its columns: the values, one per header column, and what was joined."""

    values: list[str]
    joined: dict[str, int]  # column name -> how many unquoted commas it held

    def kind(self) -> str:
        """What was repaired, for the summary's count: 'abstract split at unquoted commas'."""
        return f"{' and '.join(self.joined)} split at unquoted commas"

    def describe(self) -> str:
        return "; ".join(f"{name} split at {count} unquoted comma{'s' * (count > 1)}, joined back"
                         for name, count in self.joined.items())


def raw_fields(record: str) -> list[Field]:
    """The fields of one CSV row's raw text (its line end included or not), as Python's ``csv``
    reads them by default: a field opened by a quote runs to its closing quote (``""`` is a quote
    inside it); text after a closing quote that is not a comma goes on unquoted to the next comma.

    >>> [(f.start, f.end, f.clean) for f in raw_fields('a,"b, c",d "e", f\\n')]
    [(0, 1, False), (2, 8, True), (9, 14, False), (15, 17, False)]
    >>> [(f.start, f.end, f.clean) for f in raw_fields('"x "y" z",')]
    [(0, 9, False), (10, 10, False)]
    """
    end = len(record.rstrip("\r\n"))
    fields, start = [], 0
    while True:
        if start < end and record[start] == '"':
            stop, clean = _quoted_field_end(record, start, end)
        else:
            comma = record.find(",", start, end)
            stop, clean = (end if comma < 0 else comma), False
        fields.append(Field(start, stop, clean))
        if stop >= end:
            return fields
        start = stop + 1  # past the comma


def _quoted_field_end(record: str, start: int, end: int) -> tuple[int, bool]:
    """Where the field opened by the quote at ``start`` ends, and whether its closing quote ends it."""
    position = start + 1
    while True:
        quote = record.find('"', position, end)
        if quote < 0:  # never closed: csv reads to the row's end
            return end, False
        if record.startswith('""', quote) and quote + 1 < end:  # a quote inside the field
            position = quote + 2
            continue
        if quote + 1 == end or record[quote + 1] == ",":
            return quote + 1, True
        comma = record.find(",", quote + 1, end)  # closed early: the rest runs on unquoted
        return (end if comma < 0 else comma), False


def looks_like_url(value: str) -> bool:
    """Whether a field's value is a URL, and nothing else."""
    value = value.strip()
    return value.startswith(("http://", "https://")) and not any(c.isspace() for c in value)


def repair(columns: list[str], values: list[str], record: str) -> Repair | str:
    """``values`` (csv's reading of the raw ``record``, more of them than ``columns``) given back one
    per column, or why that is uncertain. ``columns`` are the header's names, lower-cased."""
    width, fields = len(columns), raw_fields(record)
    if len(fields) != len(values):
        return f"{len(values)} fields where the header has {width}, and its quoting is too broken to tell whose"
    extra = len(values) - width
    cuts = _anchors(columns, values, extra)
    if isinstance(cuts, str):
        return cuts
    taken: dict[int, int] = {}  # column -> how many extra fields it takes
    for (begin, shift), (stop, next_shift) in zip(cuts, cuts[1:]):
        if next_shift > shift:
            takers = [column for column in range(begin, stop)
                      if _can_take(columns, fields, column, begin, stop, shift, next_shift - shift)]
            if len(takers) != 1:
                names = [columns[c] for c in range(begin, stop) if columns[c] not in NO_COMMAS]
                return (f"{len(values)} fields where the header has {width}: the {next_shift - shift} extra could "
                        f"belong to {' or '.join(names) or 'no column'}, so which is uncertain")
            taken[takers[0]] = next_shift - shift
    return _rejoined(columns, values, record, fields, taken)


def _anchors(columns: list[str], values: list[str], extra: int) -> list[tuple[int, int]] | str:
    """(column, shift) at the row's start, at each URL column whose URL is found, and at its end:
    ``shift`` is how many extra fields lie before that column."""
    cuts = [(0, 0)]
    for column, name in enumerate(columns):
        if name in URL_COLUMNS:
            shifts = [shift for shift in range(cuts[-1][1], extra + 1) if looks_like_url(values[column + shift])]
            if len(shifts) > 1:
                return f"{len(values)} fields where the header has {len(columns)}, and {len(shifts)} of them look like its {name}"
            if shifts:
                cuts.append((column, shifts[0]))
    cuts.append((len(columns), extra))
    return cuts


def _can_take(columns, fields, column, begin, stop, shift, surplus) -> bool:
    """Whether ``column`` can hold the ``surplus`` extra fields of the stretch of columns
    ``begin``..``stop`` (whose first field is ``shift`` fields late): it is free text, its own first
    field could be the first piece of a split value (a field quoted cleanly, ``"a, b",``, is a whole
    value), and every other free-text column of the stretch then lies on a field that cannot have split."""
    if columns[column] in NO_COMMAS or fields[column + shift].pinned():
        return False
    for other in range(begin, stop):
        if other != column and columns[other] not in NO_COMMAS:
            position = other + shift + (surplus if other > column else 0)
            if not fields[position].pinned():
                return False
    return True


def _rejoined(columns, values, record, fields, taken) -> Repair | str:
    """One value per column: csv's own, or, for a column that took extra fields, its raw text."""
    out, position, joined = [], 0, {}
    for column, name in enumerate(columns):
        count = taken.get(column, 0)
        if not count:
            out.append(values[position])
        else:
            text = _unquoted(record[fields[position].start : fields[position + count].end])
            if text is None:
                return f"{len(values)} fields where the header has {len(columns)}, and its {name} opens a quote it never closes"
            out.append(text)
            joined[name] = count
        position += count + 1
    return Repair(out, joined)


def _unquoted(raw: str) -> str | None:
    """A column's raw text as its value: enclosing quotes removed and ``""`` read as ``"``; None
    when it opens a quote that it does not close.

    >>> _unquoted('"We study "X", a model, here."'), _unquoted("plain, text"), _unquoted('"open, text')
    ('We study "X", a model, here.', 'plain, text', None)
    """
    if not raw.startswith('"'):
        return raw
    if len(raw) >= 2 and raw.endswith('"'):
        return raw[1:-1].replace('""', '"')
    return None
