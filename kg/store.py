"""Store: a built graph loaded into pyoxigraph, an embedded SPARQL 1.1 engine, and queried.

``kg build -o graphs/NAME`` fills an on-disk store, ``graphs/NAME.oxigraph/``
(:func:`fill_store`), beside the exported files; ``open_graph`` opens it
read-only, which takes milliseconds whatever the graph's size, or loads the
exported N-Triples into memory when there is no store (a graph built before
stores existed, or a bare ``.nt`` file). ``run_query`` answers SPARQL with
values bound by substitution (never formatted into the query text); the
example queries shipped in ``kg/queries`` carry their parameters and defaults
in ``# param:`` lines.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import pyoxigraph as ox

from .errors import GraphNotFound, KGError
from .vocab import NAMESPACES

#: ``kg build`` writes the graph's on-disk store to ``graphs/NAME`` + this suffix (a folder).
STORE_SUFFIX = ".oxigraph"
_FORMATS = {".nt": ox.RdfFormat.N_TRIPLES, ".ttl": ox.RdfFormat.TURTLE, ".jsonld": ox.RdfFormat.JSON_LD}
PREFIXES = {name: str(ns) for name, ns in NAMESPACES.items()}


def graph_file(path: str | Path) -> Path:
    """The RDF file of a graph given as ``graphs/NAME`` (the ``-o`` of ``kg build``) or as a file."""
    path = Path(path)
    if path.suffix in _FORMATS and path.is_file():
        return path
    for suffix in _FORMATS:  # N-Triples first: the fastest to load
        candidate = path.with_name(path.name + suffix) if path.suffix not in _FORMATS else path.with_suffix(suffix)
        if candidate.is_file():
            return candidate
    raise GraphNotFound(str(path))


def store_dir(path: str | Path) -> Path | None:
    """The on-disk store of the graph at ``path`` (``graphs/NAME``, one of its files, or the
    store folder itself), or None when ``kg build`` wrote none.

    >>> store_dir("no/such/graph") is None
    True
    """
    path = Path(path)
    if path.suffix == STORE_SUFFIX:
        return path if path.is_dir() else None
    stem = path.with_suffix("") if path.suffix in _FORMATS else path
    folder = stem.with_name(stem.name + STORE_SUFFIX)
    return folder if folder.is_dir() else None


def open_graph(path: str | Path) -> ox.Store:
    """A store holding the graph at ``path``: its on-disk store opened read-only when
    ``kg build`` wrote one, else an in-memory store loaded from its RDF file.

    Raises ``GraphNotFound`` when there is neither, ``KGError`` when the file is not valid RDF.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     nt = Path(folder) / "g.nt"
    ...     _ = nt.write_text('<https://e.org/a> <https://e.org/p> "x" .\\n', encoding="utf-8")
    ...     _ = fill_store(nt, Path(folder) / "g.oxigraph")
    ...     len(open_graph(Path(folder) / "g"))
    1
    """
    folder = store_dir(path)
    if folder is not None:
        try:
            return ox.Store.read_only(str(folder))
        except OSError:  # e.g. a store written by another pyoxigraph version: the RDF file still works
            pass
    file = graph_file(path)
    store = ox.Store()
    try:
        store.bulk_load(path=str(file), format=_FORMATS[file.suffix])
    except SyntaxError as error:
        raise KGError(f"{file}: not valid RDF ({error}). Rebuild it with 'kg build'.") from None
    return store


def fill_store(rdf_file: str | Path, folder: str | Path) -> Path:
    """Load ``rdf_file`` into a new on-disk store at ``folder`` and close it.

    The store is compacted (``optimize``) so that readers open it read-only
    without replaying a write-ahead log. ``folder`` must not exist yet: the
    build fills a staging folder and moves it into place.
    """
    rdf_file, folder = Path(rdf_file), Path(folder)
    if folder.exists():
        raise KGError(f"{folder} already exists; fill_store writes a new store. Remove it first.")
    store = ox.Store(str(folder))
    try:
        store.bulk_load(path=str(rdf_file), format=_FORMATS[rdf_file.suffix])
    except SyntaxError as error:
        raise KGError(f"{rdf_file}: not valid RDF ({error}). Rebuild it with 'kg build'.") from None
    store.optimize()
    store.flush()
    del store  # pyoxigraph closes the database when the Store is freed (CPython frees it here)
    return folder


@dataclass
class Example:
    """A shipped example query: its name, what it answers, its parameters with defaults, its text."""

    name: str
    description: str
    params: dict[str, str]
    text: str


def examples() -> dict[str, Example]:
    """The example queries in ``kg/queries``, by name."""
    found = {}
    for resource in sorted(files("kg.queries").iterdir(), key=lambda r: r.name):
        if not resource.name.endswith(".rq"):
            continue
        text = resource.read_text(encoding="utf-8")
        description = " ".join(m.group(1).strip() for m in re.finditer(r"^# (?!param:)(.*)$", text, re.M))
        params = {m.group(1): m.group(2).strip().strip('"') for m in re.finditer(r"^# param: (\w+)\s*=\s*(.*)$", text, re.M)}
        name = resource.name[:-3]
        found[name] = Example(name, description, params, text)
    return found


def run_query(store: ox.Store, query: str, bindings: dict[str, str] | None = None):
    """Run ``query``; each binding replaces the variable of that name by a plain literal.

    Returns ``QuerySolutions``, ``QueryBoolean`` or ``QueryTriples`` (see pyoxigraph).
    Raises ``KGError`` with the engine's message when the query is not valid SPARQL.
    """
    substitutions = {ox.Variable(name): ox.Literal(value) for name, value in (bindings or {}).items()}
    try:
        return store.query(query, prefixes=PREFIXES, substitutions=substitutions or None)
    except SyntaxError as error:
        raise KGError(f"Invalid SPARQL: {error}") from None
    except RuntimeError as error:  # e.g. a bound variable the query does not select
        raise KGError(f"Query failed: {error}") from None


def _cell(term) -> str:
    if term is None:
        return ""
    return term.value if isinstance(term, (ox.NamedNode, ox.Literal, ox.BlankNode)) else str(term)


def format_results(result, fmt: str = "table") -> str:
    """Results as ``table`` (aligned text), ``csv``, ``json`` (SPARQL 1.1 JSON results) or, for
    CONSTRUCT/DESCRIBE, N-Triples."""
    if isinstance(result, ox.QueryBoolean):
        return json.dumps({"head": {}, "boolean": bool(result)}) if fmt == "json" else str(bool(result)).lower()
    if isinstance(result, ox.QueryTriples):
        return ox.serialize(result, format=ox.RdfFormat.N_TRIPLES).decode()
    if fmt == "json":
        return result.serialize(format=ox.QueryResultsFormat.JSON).decode()
    columns = [v.value for v in result.variables]
    rows = [[_cell(solution[c]) for c in columns] for solution in result]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        return out.getvalue()
    return _table(columns, rows)


def _table(columns: list[str], rows: list[list[str]], width: int = 60) -> str:
    def fit(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= width else text[: width - 1] + "…"

    cells = [[fit(c) for c in row] for row in rows]
    widths = [max([len(col)] + [len(r[i]) for r in cells]) for i, col in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)
