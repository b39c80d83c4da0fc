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
import hashlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from .errors import KGError
from .model import Paper, PaperExtraction


class _CacheFile:
    """One SQLite file of the cache, made with its folder and its ``tables`` where missing."""

    kind = "cache"  # what the file is called in an error

    def __init__(self, path: str | Path, *tables: str):
        self.path = path
        with self._reporting():
            if str(path) != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path))
            for table in tables:
                self._db.execute(table)

    @contextlib.contextmanager
    def _reporting(self):
        """A full disk or a file that is no SQLite database is one line naming the cache, not a traceback."""
        try:
            yield
        except (sqlite3.Error, OSError) as error:
            raise KGError(f"The {self.kind} {self.path} cannot be used ({error}): "
                          "free some space, remove the file, or build with --no-cache.") from None

    def close(self) -> None:
        self._db.close()


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
        with self._reporting():
            row = self._db.execute("SELECT value FROM extraction WHERE key = ?", (self._key(paper.abstract),)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        data["paper"] = {"id": paper.id, "abstract": paper.abstract}
        try:
            extraction = PaperExtraction.from_json(data)
        except ValueError:  # stored in an older form: a miss, extracted again and replaced by put()
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
        with self._reporting(), self._db:
            self._db.executemany("INSERT OR REPLACE INTO extraction VALUES (?, ?)", rows)


class LastBuilds(_CacheFile):
    """Where each graph's last build wrote its blocks of triples (:data:`kg.write.triples.Block`), in the SQLite file at ``path``.

    For each graph: the folder that build's files are in, and for each block, in the order written,
    its digest, its subject's and where its bytes lie in each file (:class:`kg.write.serialize.Placed`).
    A rebuild copies the bytes of every block that did not change from those files, serializing only
    the others, and patches that build's store with the difference (:mod:`kg.write.serialize`). A
    block's N-Triples, Turtle and JSON-LD are pure functions of the block, so a copied one is byte
    for byte the one a full build writes.

    >>> log = LastBuilds(":memory:")
    >>> log.record("g", "setting", ".g.build-1", {"export": b"..."})
    >>> log.last("g")
    ('setting', '.g.build-1', {'export': b'...'})
    >>> log.last("other") is None
    True
    """

    kind = "build cache"

    def __init__(self, path: str | Path):
        super().__init__(path, "CREATE TABLE IF NOT EXISTS build (graph TEXT NOT NULL, setting TEXT NOT NULL, folder TEXT "
                               "NOT NULL, part TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (graph, part))")

    def last(self, graph: str) -> tuple[str, str, dict[str, bytes]] | None:
        """``(setting, folder, {part: bytes})`` recorded for the last build of ``graph``, or None."""
        with self._reporting():
            rows = self._db.execute("SELECT setting, folder, part, value FROM build WHERE graph = ?", (graph,)).fetchall()
        return (rows[0][0], rows[0][1], {part: value for _, _, part, value in rows}) if rows else None

    def record(self, graph: str, setting: str, folder: str, parts: dict[str, bytes]) -> None:
        """Record the last build of ``graph``: its ``setting``, the ``folder`` of its files and its ``parts``."""
        with self._reporting(), self._db:
            self._db.execute("DELETE FROM build WHERE graph = ?", (graph,))
            self._db.executemany("INSERT INTO build VALUES (?, ?, ?, ?, ?)",
                                 [(graph, setting, folder, part, value) for part, value in parts.items()])
