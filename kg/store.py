"""Store: a built graph loaded into pyoxigraph, an embedded SPARQL 1.1 engine, and queried.

``kg build -o graphs/NAME`` fills an on-disk store, ``graphs/NAME.oxigraph/``
(:func:`fill_store`), beside the exported files; ``open_graph`` opens it
read-only, which takes milliseconds whatever the graph's size, or loads the
exported N-Triples into memory when there is no store (a graph built before
stores existed, or a bare ``.nt`` file). ``run_query`` answers SPARQL with
values bound by substitution (never formatted into the query text); the
queries themselves live in :mod:`kg.query`.
"""
from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pyoxigraph as ox

from .errors import GraphNotFound, KGError
from .sparql import refuse_federation
from .strings import counted
from .vocab import NAMESPACES

#: ``kg build`` writes the graph's on-disk store to ``graphs/NAME`` + this suffix (a folder).
STORE_SUFFIX = ".oxigraph"
#: The file in a store's folder naming the build that wrote it (:func:`write_store`): it moves with the
#: folder, so a rebuild can tell the last build's store from any other put in its place.
STORE_MARK = "kg-build-mark"
#: ... and its entities' vectors (:class:`kg.similarity.Vectors`) to ``graphs/NAME`` + this suffix.
VECTORS_SUFFIX = ".vectors.npz"
#: ... its tables, every panel's source (:func:`kg.query.tables.write_tables`), to this suffix.
TABLES_SUFFIX = ".tables.json"
#: ... and the record of those files, checked as each is read (:mod:`kg.kept`), to this suffix.
MANIFEST_SUFFIX = ".manifest.json"
#: What older kg kept beside a graph (the panels of its most linked entities; what kg related read of its
#: store, now made from its tables): a rebuild removes them.
PANELS_SUFFIX, RELATED_SUFFIX = ".panels.zip", ".related.npz"
#: ... and its index (co-occurrence counts, task neighbours: :func:`kg.write.serialize.write_rdf`) to this suffix.
INDEX_SUFFIX = ".index.nt"
_FORMATS = {".nt": ox.RdfFormat.N_TRIPLES, ".ttl": ox.RdfFormat.TURTLE, ".jsonld": ox.RdfFormat.JSON_LD}
#: The endings of the files and folder a built graph consists of (its HTML page aside).
GRAPH_SUFFIXES = (*_FORMATS, STORE_SUFFIX)
PREFIXES = {name: str(ns) for name, ns in NAMESPACES.items()}
T = TypeVar("T")


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


def index_file(rdf_file: str | Path) -> Path | None:
    """The index ``kg build`` wrote beside the RDF file ``rdf_file`` (``NAME.index.nt`` beside
    ``NAME.nt``, ``.ttl`` or ``.jsonld``: :func:`kg.write.serialize.write_rdf`), or None.

    >>> index_file("no/such/graph.nt") is None
    True
    """
    rdf_file = Path(rdf_file)
    index = rdf_file.with_name(rdf_file.name[: -len(rdf_file.suffix)] + INDEX_SUFFIX)
    return index if index.is_file() and index != rdf_file else None


def graph_stem(path: str | Path) -> Path:
    """``graphs/NAME`` (the ``-o`` of ``kg build``) for the graph at ``path``: that path, one of its
    files, or its store.

    >>> graph_stem("graphs/iclr.2026.index.nt"), graph_stem("graphs/iclr.2026.oxigraph"), graph_stem("graphs/iclr")
    (PosixPath('graphs/iclr.2026'), PosixPath('graphs/iclr.2026'), PosixPath('graphs/iclr'))
    """
    path = Path(path)
    for suffix in (INDEX_SUFFIX, *_FORMATS, STORE_SUFFIX):  # .index.nt before .nt
        if path.name.endswith(suffix):
            return path.with_name(path.name[: -len(suffix)])
    return path


def store_dir(path: str | Path) -> Path | None:
    """The on-disk store of the graph at ``path`` (``graphs/NAME``, one of its files, or the
    store folder itself), or None when ``kg build`` wrote none.

    >>> store_dir("no/such/graph") is None
    True
    """
    stem = graph_stem(path)
    folder = stem.with_name(stem.name + STORE_SUFFIX)
    return folder if folder.is_dir() else None


def beside(path: str | Path, suffix: str) -> Path | None:
    """The file ``kg build`` wrote beside the graph at ``path`` with ``suffix``, or None if there is none."""
    stem = graph_stem(path)
    file = stem.with_name(stem.name + suffix)
    return file if file.is_file() else None


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
    store = ox.Store()
    _load(store, graph_file(path))
    return store


_LOAD_CHUNK = 8_000_000  # bytes of N-Triples per bulk load


def write_store(folder: str | Path, fill: Callable[[ox.Store], T], *, start_from: Path | None = None) -> T:
    """Make a new on-disk store at ``folder``, let ``fill(store)`` add to it, compact it and
    close it; return what ``fill`` returned.

    ``folder`` must not exist yet: the build fills a staging folder and moves
    it into place. Compacted (``optimize``), the store opens read-only without
    replaying a write-ahead log. ``fill`` must not keep the store: pyoxigraph
    closes it when its last reference goes. With ``start_from``, an earlier
    store, the new one starts as its copy (for ``fill`` to patch), its
    immutable table files linked rather than copied, and is flushed, not compacted.
    The build then writes its mark in it (:func:`kg.kept.sign_store`).
    """
    folder = Path(folder)
    if folder.exists():
        raise KGError(f"{folder} already exists; kg writes a new store. Remove it first.")
    if start_from is not None:
        shutil.copytree(start_from, folder, copy_function=_link_or_copy)
    store = ox.Store(str(folder))
    result = fill(store)
    if start_from is None:
        store.optimize()
    store.flush()
    del store  # the only reference: CPython frees it here, which closes the database
    # RocksDB's diagnostic log names the folder the store was written in: a machine's absolute path.
    for log in folder.glob("LOG*"):
        log.unlink()
    (folder / STORE_MARK).unlink(missing_ok=True)  # a copy's: that store's, not this one's
    return result


def store_mark(folder: str | Path) -> str:
    """The mark the build wrote in the store at ``folder`` (:func:`kg.kept.sign_store`); "" for none
    (or no store).

    >>> store_mark("no/such/store")
    ''
    """
    try:
        with open(Path(folder) / STORE_MARK, "rb") as file:
            return file.read(128).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return ""


def store_digest(folder: str | Path) -> str:
    """The SHA-256 of what the store at ``folder`` holds: its database files, by name and content (its
    diagnostic log, lock and mark aside). Any write to the store changes it; opening it read-only does
    not. A build patches the last build's store only if it still has the digest recorded then
    (a store swapped in, or written to in place, is filled anew): 0.13 s for a 180 MB store.

    >>> store_digest("no/such/store")
    ''
    """
    folder = Path(folder)
    if not folder.is_dir():
        return ""
    digest = hashlib.sha256()
    for file in sorted(folder.iterdir()):
        if file.name in (STORE_MARK, "LOCK") or file.name.startswith("LOG") or not file.is_file():
            continue
        digest.update(f"{file.name}\0{file.stat().st_size}\0".encode())
        with open(file, "rb") as data:
            while chunk := data.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def _link_or_copy(source: str, target: str) -> None:
    # RocksDB never changes a table file (.sst) once written, so the copy may share it; the rest
    # (its manifest, options and log) the copy writes to.
    if source.endswith(".sst"):
        try:
            os.link(source, target)
            return
        except OSError:  # another file system, or one without hard links
            pass
    shutil.copy2(source, target)


def fill_store(rdf_file: str | Path, folder: str | Path) -> Path:
    """Load ``rdf_file`` (and the index beside it, :func:`index_file`) into a new on-disk store at
    ``folder`` and close it; return ``folder``.

    For a graph that exists only as files: ``kg build`` fills its store from
    the triples in memory (:func:`kg.write.serialize.write_rdf`).
    """
    write_store(folder, lambda store: _load(store, Path(rdf_file)))
    return Path(folder)


def _load(store: ox.Store, rdf_file: Path) -> None:
    """Load ``rdf_file`` and the index beside it (:func:`index_file`) into ``store``."""
    for part in filter(None, (rdf_file, index_file(rdf_file))):
        try:
            if part.suffix == ".nt":
                # N-Triples is one triple per line, so it loads in chunks of whole lines: the bulk
                # loader's memory grows with what it is given (a 470k-triple file at once: +350 MB;
                # in 8 MB chunks: +60 MB, for a quarter more time).
                with part.open("rb") as lines:
                    while chunk := lines.readlines(_LOAD_CHUNK):
                        store.bulk_load(b"".join(chunk), format=ox.RdfFormat.N_TRIPLES)
            else:
                store.bulk_load(path=str(part), format=_FORMATS[part.suffix])
        except SyntaxError as error:
            raise KGError(f"{part}: not valid RDF ({error}). Rebuild it with 'kg build'.") from None


def syntax_message(error: SyntaxError) -> str:
    """The engine's syntax error for a person: where it is and the words it expected, without
    the character classes of the grammar that follow them.

    >>> syntax_message(SyntaxError("error at 1:9: expected one of '{', ['A' ..= 'Z' | 'a' ..= 'z']"))
    "Invalid SPARQL: error at 1:9: expected one of '{' …"
    """
    text = " ".join(str(error).split())
    cut = text.find(" [")
    return "Invalid SPARQL: " + (text[:cut].rstrip(",") + " …" if cut > 0 else text)


def run_query(store: ox.Store, query: str, bindings: dict[str, str] | None = None):
    """Run ``query``; each binding replaces the variable of that name by a plain literal.

    Returns ``QuerySolutions``, ``QueryBoolean`` or ``QueryTriples`` (see pyoxigraph).
    Raises ``KGError`` with the engine's message when the query is not valid SPARQL,
    ``QueryRefused`` when it names another endpoint (:func:`refuse_federation`).
    """
    refuse_federation(query)
    substitutions = {ox.Variable(name): ox.Literal(value) for name, value in (bindings or {}).items()}
    try:
        return store.query(query, prefixes=PREFIXES, substitutions=substitutions or None)
    except SyntaxError as error:
        raise KGError(syntax_message(error)) from None
    except RuntimeError as error:  # e.g. a bound variable the query does not select
        raise KGError(f"Query failed: {error}") from None


def _cell(term, counts: bool = False) -> str:
    if term is None:
        return ""
    if counts and isinstance(term, ox.Literal) and term.datatype == _INTEGER:
        return f"{int(term.value):,}"
    return term.value if isinstance(term, (ox.NamedNode, ox.Literal, ox.BlankNode)) else str(term)


_INTEGER = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def format_results(result, fmt: str = "table", *, counts: bool = False) -> str:
    """Results as ``table`` (aligned text), ``csv``, ``json`` (SPARQL 1.1 JSON results) or, for
    CONSTRUCT/DESCRIBE, N-Triples. With ``counts``, a table's integers are counts, written with
    thousands separators as every count kg prints is (``kg stats``); a query's own answer is left as
    the graph holds it (a year is no count)."""
    if isinstance(result, ox.QueryBoolean):
        return json.dumps({"head": {}, "boolean": bool(result)}) if fmt == "json" else str(bool(result)).lower()
    if isinstance(result, (ox.QueryTriples, list)):  # a list: of triples or quads read back from N-Triples
        return ox.serialize(result, format=ox.RdfFormat.N_TRIPLES).decode()
    if fmt == "json":
        return result.serialize(format=ox.QueryResultsFormat.JSON).decode()
    columns = [v.value for v in result.variables]
    rows = [[_cell(solution[c], counts and fmt == "table") for c in columns] for solution in result]
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
    lines.append(f"({counted(len(rows), 'row')})")
    return "\n".join(lines)


# ----------------------------------------------------- results for other programs


RESULT_FORMATS = {  # media type -> format of SELECT and ASK results
    "application/sparql-results+json": ox.QueryResultsFormat.JSON, "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML, "application/xml": ox.QueryResultsFormat.XML,
    "text/xml": ox.QueryResultsFormat.XML, "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
GRAPH_FORMATS = {  # media type -> format of CONSTRUCT and DESCRIBE results
    "text/turtle": ox.RdfFormat.TURTLE, "application/turtle": ox.RdfFormat.TURTLE,
    "application/x-turtle": ox.RdfFormat.TURTLE, "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "text/plain": ox.RdfFormat.N_TRIPLES, "application/ld+json": ox.RdfFormat.JSON_LD,
    "application/json": ox.RdfFormat.JSON_LD, "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/xml": ox.RdfFormat.RDF_XML,
}
def negotiate(accept: str, offers: dict, default):
    """The format of ``offers`` (media type -> format) that the Accept header ``accept`` prefers.

    ``default`` for an empty header or ``*/*``; None when nothing offered is acceptable.

    >>> negotiate("text/csv;q=0.5, application/json", RESULT_FORMATS, None).name
    'SPARQL Results in JSON'
    >>> negotiate("text/html, */*;q=0.8", GRAPH_FORMATS, ox.RdfFormat.TURTLE).name
    'Turtle'
    >>> negotiate("image/png", RESULT_FORMATS, None) is None
    True
    """
    if not accept.strip():
        return default
    ranges = []
    for order, item in enumerate(accept.split(",")):
        media, *params = [part.strip() for part in item.split(";")]
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if weight > 0:
            ranges.append((-weight, order, media.lower()))
    for _, _, media in sorted(ranges):
        if media in offers:
            return offers[media]
        if media == "*/*":
            return default
        if media.endswith("/*"):
            for offered, fmt in offers.items():
                if offered.startswith(media[:-1]):
                    return fmt
    return None


class NotAcceptable(KGError):
    """No format the client accepts can hold the result."""


def _content_type(fmt) -> str:
    media = fmt.media_type
    return media + "; charset=utf-8" if media.startswith("text/") and "charset" not in media else media


def serialize_results(result, accept: str = "", *, max_results: int | None = None) -> tuple[str, bytes, bool]:
    """A query's ``result`` in the format the Accept header ``accept`` prefers, and capped.

    Returns ``(content type, body, truncated)``; ``truncated`` is True when
    more than ``max_results`` solutions or triples were left out. SELECT and
    ASK results are written as SPARQL JSON (the default), XML, CSV or TSV;
    CONSTRUCT and DESCRIBE as Turtle (the default), N-Triples, JSON-LD or
    RDF/XML. Raises ``NotAcceptable`` when ``accept`` allows none of them.

    >>> store = ox.Store()
    >>> store.add(ox.Quad(ox.NamedNode("https://e.org/a"), ox.NamedNode("https://e.org/p"), ox.Literal("x")))
    >>> serialize_results(store.query("SELECT ?o { ?s ?p ?o }"), "text/csv")
    ('text/csv; charset=utf-8', b'o\\r\\nx\\r\\n', False)
    >>> serialize_results(store.query("CONSTRUCT WHERE { ?s ?p ?o }"), "application/n-triples", max_results=0)
    ('application/n-triples', b'', True)
    """
    limit = sys.maxsize if max_results is None else max_results
    if isinstance(result, (ox.QueryTriples, list)):  # a list: the triples a SPARQL server sent (kg.query.endpoint)
        fmt = negotiate(accept, GRAPH_FORMATS, ox.RdfFormat.TURTLE)
        if fmt is None:
            raise _not_acceptable(accept, GRAPH_FORMATS)
        triples = list(itertools.islice(result, limit + 1 if limit < sys.maxsize else None))
        body = ox.serialize(triples[:limit], format=fmt, prefixes=PREFIXES)
        return _content_type(fmt), body, len(triples) > limit
    fmt = negotiate(accept, RESULT_FORMATS, ox.QueryResultsFormat.JSON)
    if fmt is None:
        raise _not_acceptable(accept, RESULT_FORMATS)
    if isinstance(result, ox.QueryBoolean):
        return _content_type(fmt), result.serialize(format=fmt), False
    body, truncated = _capped_solutions(result, fmt, limit)
    return _content_type(fmt), body, truncated


def _capped_solutions(solutions: ox.QuerySolutions, fmt, max_results: int) -> tuple[bytes, bool]:
    """At most ``max_results`` solutions in ``fmt``.

    pyoxigraph serializes a whole result set or nothing, so the first
    ``max_results`` solutions are written as TSV (whose cells are the terms'
    N-Triples syntax, which ``str`` gives, escapes included), parsed back into
    a result set and serialized from there.
    """
    variables = solutions.variables
    lines = ["\t".join(str(v) for v in variables)]
    truncated = False
    for count, solution in enumerate(solutions):
        if count == max_results:
            truncated = True
            break
        lines.append("\t".join("" if solution[v] is None else str(solution[v]) for v in variables))
    tsv = ("\n".join(lines) + "\n").encode("utf-8")
    if fmt == ox.QueryResultsFormat.TSV:
        return tsv, truncated
    return ox.parse_query_results(tsv, format=ox.QueryResultsFormat.TSV).serialize(format=fmt), truncated


def _not_acceptable(accept: str, offers: dict) -> NotAcceptable:
    return NotAcceptable(f"Cannot answer in any format of Accept: {accept!r}. "
                         f"This result can be sent as: {', '.join(offers)}.")
