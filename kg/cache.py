"""A cache of extractions by abstract text and extractor version, so re-runs only parse what is new.

Extraction is pure (one abstract in, one ``PaperExtraction`` out), so its result
can be reused whenever the same abstract meets the same extractor. Entries
live in one SQLite file; a different extractor version simply never matches
old entries, and an entry in an older form of ``PaperExtraction`` is a miss.

>>> from kg.model import Paper, PaperExtraction
>>> cache = ExtractionCache(":memory:", extractor="rules-1")
>>> ex = PaperExtraction(Paper("p", "We propose X."), [(0, 13)], [], {})
>>> cache.put([ex]); cache.get(Paper("other id", "We propose X.")).paper.id
'other id'
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple, TypeVar

from .errors import KGError
from .model import Paper, PaperExtraction

T = TypeVar("T")

#: Seconds a build waits for a cache file another program holds locked before it says so.
LOCK_WAIT = 5.0


class _CacheFile:
    """One SQLite file of the cache, made with its folder and its ``schema`` where missing.

    A cache only saves work, so it never stops a build: a file SQLite finds damaged (truncated,
    overwritten) is set aside as ``NAME.damaged-TIMESTAMP`` and a new one made in its place, and
    :attr:`set_aside` says so in a line for the build to print. Other failures (a full disk, a
    locked file) are one line naming the file.
    """

    kind = "cache"  # what the file is called in an error

    def __init__(self, path: str | Path, *schema: str):
        self.path = path
        self.schema = schema
        self.set_aside: list[str] = []  # one line for each damaged file moved aside
        with self._reporting():
            if str(path) != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                _refuse_what_is_no_file(Path(path), self.kind)
            self._db = sqlite3.connect(str(path), timeout=LOCK_WAIT)
        self._run(self._make_schema)

    def _make_schema(self, db: sqlite3.Connection) -> None:
        for statement in self.schema:
            db.execute(statement)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(db)``; on a damaged file, ``work`` again on a new one, the damaged one set aside."""
        with self._reporting():
            try:
                return work(self._db)
            except sqlite3.DatabaseError as error:
                if not _damaged(error) or str(self.path) == ":memory:":
                    raise
                self._set_aside(error)
                return work(self._db)

    def _set_aside(self, error: sqlite3.DatabaseError) -> None:
        """Move the damaged file (and the journal SQLite keeps beside it, which belongs to it) aside
        with the time in its name, and open a new, empty one in its place."""
        self._db.close()
        path = Path(self.path)
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        for ending in ("", "-journal", "-wal", "-shm"):
            if path.with_name(path.name + ending).exists():
                os.replace(path.with_name(path.name + ending), aside.with_name(aside.name + ending))
        self.set_aside.append(f"The {self.kind} {path} could not be read ({error}): set aside as {aside.name}, "
                              "and made anew.")
        self._db = sqlite3.connect(str(path), timeout=LOCK_WAIT)
        self._make_schema(self._db)

    @contextlib.contextmanager
    def _reporting(self):
        """A full disk or a file that cannot be opened is one line naming the cache, not a traceback."""
        try:
            yield
        except (sqlite3.Error, OSError) as error:
            raise KGError(f"The {self.kind} {self.path} cannot be used ({error}): {_advice(error)}.") from None

    def close(self) -> None:
        self._db.close()


def _refuse_what_is_no_file(path: Path, kind: str) -> None:
    """A folder, FIFO or device where the cache's file belongs is named, not opened: SQLite would
    fail on a folder with a message about opening, and wait for ever on a FIFO."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        what = "folder" if stat.S_ISDIR(mode) else "FIFO" if stat.S_ISFIFO(mode) else "special file"
        raise KGError(f"The {kind} {path} is a {what}, not a file kg wrote: move it away, "
                      "or build with --no-cache.")


def _advice(error: Exception) -> str:
    """What to do about ``error``, by what SQLite or the system says went wrong."""
    name = getattr(error, "sqlite_errorname", "")
    number = getattr(error, "errno", None)
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in str(error):
        return "another kg build or program holds it; let that one end, or build with --no-cache"
    if name == "SQLITE_FULL" or number == errno.ENOSPC:
        return "free some space, or build with --no-cache"
    if name == "SQLITE_READONLY" or number in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "kg may not write there; check the permissions, or build with --no-cache"
    return "remove the file, or build with --no-cache"


def _damaged(error: sqlite3.DatabaseError) -> bool:
    """Whether ``error`` says the file is damaged: SQLite finds it no database or malformed, or a text
    it holds is no UTF-8 (bytes written over a row, which SQLite itself does not check)."""
    return (getattr(error, "sqlite_errorname", None) in ("SQLITE_CORRUPT", "SQLITE_NOTADB")
            or str(error).startswith("Could not decode to UTF-8"))


class ExtractionCache(_CacheFile):
    """Extractions stored by ``sha256(extractor, abstract)`` in the SQLite file at ``path``."""

    kind = "extraction cache"

    def __init__(self, path: str | Path, *, extractor: str):
        self.extractor = extractor
        self.hits = 0  # extractions get() found
        super().__init__(path, "CREATE TABLE IF NOT EXISTS extraction (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _key(self, abstract: str) -> str:
        return hashlib.sha256(f"{self.extractor}\x00{abstract}".encode()).hexdigest()

    def get(self, paper: Paper) -> PaperExtraction | None:
        """The cached extraction of ``paper``'s abstract, attached to ``paper``; None on a miss."""
        key = self._key(paper.abstract)
        row = self._run(lambda db: db.execute("SELECT value FROM extraction WHERE key = ?", (key,)).fetchone())
        if row is None:
            return None
        try:
            data = json.loads(row[0])
            data["paper"] = {"id": paper.id, "abstract": paper.abstract}
            extraction = PaperExtraction.from_json(data)
        except (ValueError, KeyError, TypeError):  # stored in an older form, or damaged: a miss, extracted again
            return None
        extraction.paper = paper
        self.hits += 1
        return extraction

    def put(self, extractions: Iterable[PaperExtraction]) -> None:
        rows = []
        for ex in extractions:
            data = ex.to_json()
            del data["paper"]  # metadata may change between runs; the extraction depends on the text alone
            rows.append((self._key(ex.paper.abstract), json.dumps(data)))

        def insert(db: sqlite3.Connection) -> None:
            with db:
                db.executemany("INSERT OR REPLACE INTO extraction VALUES (?, ?)", rows)

        self._run(insert)


class Recorded(NamedTuple):
    """A graph's last build, as :class:`LastBuilds` recorded it."""
    setting: str  # what its blocks' bytes depend on besides the blocks (the base IRI, the serializer's version)
    folder: str  # the folder its files are in
    store: str  # the digest of the store it wrote (:func:`kg.store.store_digest`): only a store with it is patched
    parts: dict[str, bytes]  # each stream's :class:`kg.write.serialize.Placed`


class LastBuilds(_CacheFile):
    """Where each graph's last build wrote its blocks of triples (:data:`kg.write.triples.Block`), in the SQLite file at ``path``.

    For each graph: the folder that build's files are in, the digest of its store, and for each block, in
    the order written, its digest, its subject's and where its bytes lie in each file, with each file's
    digest (:class:`kg.write.serialize.Placed`). A rebuild copies the bytes of every block that did not
    change from those files, once they are found to hold what that build wrote, serializing only the
    others, and patches that build's store, when it is the one there, with the difference
    (:mod:`kg.write.serialize`). A block's N-Triples, Turtle and JSON-LD are pure functions of the
    block, so a copied one is byte for byte the one a full build writes.

    >>> log = LastBuilds(":memory:")
    >>> log.record("g", Recorded("setting", ".g.build-1", "3f9c", {"export": b"..."}))
    >>> log.last("g")
    Recorded(setting='setting', folder='.g.build-1', store='3f9c', parts={'export': b'...'})
    >>> log.last("other") is None
    True
    """

    kind = "build cache"

    def __init__(self, path: str | Path):
        super().__init__(path, "DROP TABLE IF EXISTS build",  # kg's earlier form, which recorded no store
                         "CREATE TABLE IF NOT EXISTS last_build (graph TEXT NOT NULL, setting TEXT NOT NULL, "
                         "folder TEXT NOT NULL, store TEXT NOT NULL, part TEXT NOT NULL, value BLOB NOT NULL, "
                         "PRIMARY KEY (graph, part))")

    def last(self, graph: str) -> Recorded | None:
        """What was recorded of the last build of ``graph``, or None."""
        rows = self._run(lambda db: db.execute("SELECT setting, folder, store, part, value FROM last_build WHERE graph = ?",
                                               (graph,)).fetchall())
        return Recorded(*rows[0][:3], {part: value for *_, part, value in rows}) if rows else None

    def record(self, graph: str, build: Recorded) -> None:
        """Record ``build`` as the last build of ``graph``."""
        def replace(db: sqlite3.Connection) -> None:
            with db:
                db.execute("DELETE FROM last_build WHERE graph = ?", (graph,))
                db.executemany("INSERT INTO last_build VALUES (?, ?, ?, ?, ?, ?)",
                               [(graph, *build[:3], part, value) for part, value in build.parts.items()])

        self._run(replace)
