"""Store: a built graph loaded into pyoxigraph, an embedded SPARQL 1.1 engine, and queried.

``open_graph`` finds the files ``kg build -o graphs/NAME`` wrote and loads
them; ``run_query`` answers SPARQL with values bound by substitution (never
formatted into the query text); the example queries shipped in
``kg/queries`` carry their parameters and defaults in ``# param:`` lines.
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


def open_graph(path: str | Path) -> ox.Store:
    """An in-memory store holding the graph at ``path``."""
    file = graph_file(path)
    store = ox.Store()
    try:
        store.bulk_load(path=str(file), format=_FORMATS[file.suffix])
    except SyntaxError as error:
        raise KGError(f"{file}: not valid RDF ({error}). Rebuild it with 'kg build'.") from None
    return store


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
