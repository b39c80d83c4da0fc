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


class ExtractionCache:
    """Extractions stored by ``sha256(extractor, abstract)`` in the SQLite file at ``path``."""

    def __init__(self, path: str | Path, *, extractor: str):
        self.path, self.extractor = path, extractor
        with self._reporting():
            if str(path) != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path))
            self.hits = 0  # extractions get() found
            self._db.execute("CREATE TABLE IF NOT EXISTS extraction (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    @contextlib.contextmanager
    def _reporting(self):
        """A full disk or a file that is no SQLite database is one line naming the cache, not a traceback."""
        try:
            yield
        except (sqlite3.Error, OSError) as error:
            raise KGError(f"The extraction cache {self.path} cannot be used ({error}): "
                          "free some space, remove the file, or build with --no-cache.") from None

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

    def close(self) -> None:
        self._db.close()


class BlockCache:
    """The serializations of each block of triples (:data:`kg.rdf.Block`) by the block's digest, and the
    blocks each graph was last written from, in the SQLite file at ``path``.

    A rebuild then serializes only the blocks that changed, copying the rest's bytes, and patches the
    previous graph's store with the difference instead of filling a new one (:mod:`kg.rdf_write`).
    A block's N-Triples, Turtle (without the ``@prefix`` lines) and JSON-LD node are pure functions
    of the block, so a copied one is byte for byte the one a full build writes.

    >>> cache = BlockCache(":memory:")
    >>> cache.put([(b"d1", {"nt": b"<a> <b> <c> .\\n", "ttl": b"<a> <b> <c> .\\n"})])
    >>> cache.get([b"d1", b"d2"], ("nt", "ttl"))
    {b'd1': {'nt': b'<a> <b> <c> .\\n', 'ttl': b'<a> <b> <c> .\\n'}}
    >>> cache.get([b"d1"], ("nt", "jsonld"))  # a block stored without its JSON-LD is a miss for it
    {}
    """

    PARTS = ("nt", "ttl", "jsonld")

    def __init__(self, path: str | Path):
        self.path = path
        with self._reporting():
            if str(path) != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path))
            # A cache: a build's blocks are committed once, at its end, without waiting for the disk (a
            # machine that fails meanwhile may leave it unreadable; kg then says to remove it).
            self._db.execute("PRAGMA synchronous = OFF")
            self._db.execute("CREATE TABLE IF NOT EXISTS block (digest BLOB PRIMARY KEY, nt BLOB, ttl BLOB, jsonld BLOB)")
            self._db.execute("CREATE TABLE IF NOT EXISTS graph (name TEXT PRIMARY KEY, setting TEXT NOT NULL, "
                             "store TEXT NOT NULL, digests BLOB NOT NULL, subjects BLOB NOT NULL)")

    @contextlib.contextmanager
    def _reporting(self):
        try:
            yield
        except (sqlite3.Error, OSError) as error:
            raise KGError(f"The build cache {self.path} cannot be used ({error}): "
                          "free some space, remove the file, or build with --no-cache.") from None

    def get(self, digests: list[bytes], parts: Iterable[str]) -> dict[bytes, dict[str, bytes]]:
        """The blocks of ``digests`` that have every one of ``parts`` stored, by digest."""
        parts = tuple(parts)
        found: dict[bytes, dict[str, bytes]] = {}
        with self._reporting():
            for start in range(0, len(digests), 500):  # within SQLite's limit on a query's parameters
                some = digests[start:start + 500]
                columns, marks = ", ".join(parts), ", ".join("?" * len(some))
                rows = self._db.execute("SELECT digest, " + columns + " FROM block WHERE digest IN (" + marks + ")", some)
                for digest, *values in rows:
                    if all(value is not None for value in values):
                        found[digest] = dict(zip(parts, values))
        return found

    def put(self, blocks: Iterable[tuple[bytes, dict[str, bytes]]]) -> None:
        """Store each block's serializations (those given: a part not given is a miss for it later)."""
        # Not compressed: zlib's quickest level takes 40% of the room for a third more time.
        rows = [(digest, *(parts.get(part) for part in self.PARTS)) for digest, parts in blocks]
        with self._reporting():  # in the transaction written() or close() commits
            self._db.executemany("INSERT OR REPLACE INTO block VALUES (?, ?, ?, ?)", rows)

    def last_written(self, name: str) -> tuple[str, str, bytes, bytes] | None:
        """``(setting, store path, block digests, subject digests)`` of the last build of graph ``name``, or None."""
        with self._reporting():
            row = self._db.execute("SELECT setting, store, digests, subjects FROM graph WHERE name = ?", (name,)).fetchone()
        return tuple(row) if row else None

    def written(self, name: str, setting: str, store: str, digests: bytes, subjects: bytes) -> None:
        """Record the blocks graph ``name`` was written from, and drop the blocks no graph was written from
        (once they are a third of the cache: they are what earlier builds wrote)."""
        with self._reporting(), self._db:
            self._db.execute("INSERT OR REPLACE INTO graph VALUES (?, ?, ?, ?, ?)", (name, setting, store, digests, subjects))
            used = [row[0] for row in self._db.execute("SELECT digests FROM graph")]
            kept = sum(len(blob) for blob in used) // DIGEST_SIZE
            if self._db.execute("SELECT count(*) FROM block").fetchone()[0] > kept * 3 // 2:
                self._db.execute("CREATE TEMP TABLE IF NOT EXISTS kept (digest BLOB PRIMARY KEY)")
                self._db.execute("DELETE FROM kept")
                for blob in used:
                    self._db.executemany("INSERT OR IGNORE INTO kept VALUES (?)",
                                         ((blob[i:i + DIGEST_SIZE],) for i in range(0, len(blob), DIGEST_SIZE)))
                self._db.execute("DELETE FROM block WHERE digest NOT IN (SELECT digest FROM kept)")

    def close(self) -> None:
        with self._reporting():
            self._db.commit()
            self._db.close()


#: Bytes of a block's digest (BLAKE2b): 128 bits, so that millions of blocks never share one.
DIGEST_SIZE = 16
