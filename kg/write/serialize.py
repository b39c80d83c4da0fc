"""The export in pyoxigraph's terms: as triples (:func:`to_triples`), and written (:func:`write_rdf`)
to ``.ttl``, ``.nt`` and ``.jsonld``, the index ``.index.nt`` and the store in one pass over the
blocks of :mod:`kg.write.triples` and :mod:`kg.write.cooccurrence`, chunk by chunk, in time linear in the number of
triples and with memory for one chunk of them.

Turtle and N-Triples are pyoxigraph's, the JSON-LD :mod:`kg.write.jsonld`'s; the files replace any
previous ones only once all are complete (:func:`kg.files.replacing`).
"""
from __future__ import annotations

import array
import functools
import hashlib
import itertools
import json
import os
import re
import weakref
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import networkx as nx
import numpy as np
import pyoxigraph as ox
from rdflib import BNode, Graph, URIRef
from rdflib.namespace import XSD

from . import jsonld
from .. import vocab
from ..files import replacing
from .triples import Block, Term, export_blocks, pair_key
from .cooccurrence import index_blocks
from .jsonld import JsonLd
from ..store import INDEX_SUFFIX  # the index: N-Triples of its own, whatever the formats

__all__ = ["to_triples", "write_rdf", "RDF_FORMATS"]

_PREFIXES = {prefix: str(ns) for prefix, ns in vocab.NAMESPACES.items()}


def to_triples(G: nx.MultiDiGraph, *, base: str = vocab.DEFAULT_BASE) -> Iterator[ox.Triple]:
    """The RDF triples of a knowledge graph built by :func:`kg.link.graph.build_graph`, as pyoxigraph terms.

    The blocks of the export (:func:`kg.write.triples.export_blocks`, whose order they
    keep) and then of its index (:func:`kg.write.cooccurrence.index_blocks`), triple by
    triple: the triples :func:`write_rdf` writes to the files and the store.
    Parameters and errors are those of :func:`kg.write.triples.export_blocks`.

    Example
    -------
    >>> from kg.link.graph import build_graph
    >>> from kg.model import Paper, Mention, PaperExtraction, Entity
    >>> ex = PaperExtraction(Paper("p1", "We propose GRPO."), [(0, 16)],
    ...     [Mention(11, 15, "GRPO", "Method", 0, 0.9, "rules", role="proposes", role_confidence=0.9)], {})
    >>> G = build_graph([ex], [Entity("GRPO", "Method", "GRPO", [], [("p1", 0)])])
    >>> triples = list(to_triples(G, base="https://example.org/kg/"))
    >>> len(triples)
    29
    >>> print(triples[-1])
    <https://example.org/kg/extractor/rules> <http://www.w3.org/2000/01/rdf-schema#label> "rules"
    """
    terms = _OxTerms()
    for block in itertools.chain(export_blocks(G, base), index_blocks(G, base)):
        yield from terms.triples(block)


#: The RDF files kg writes, by extension.
RDF_FORMATS = ("ttl", "nt", "jsonld")


def write_rdf(graph: nx.MultiDiGraph | Graph, stem: str | os.PathLike, *,
              base: str = vocab.DEFAULT_BASE, formats: Iterable[str] = RDF_FORMATS,
              store: ox.Store | None = None, last: LastBuild | None = None, patch: bool = False,
              tally: Tally | None = None) -> dict[str, Path]:
    """Write ``stem.ttl``, ``stem.nt`` and ``stem.jsonld`` (or those of ``formats``) and, for a
    networkx graph, its index ``stem.index.nt``, atomically; add the same triples to ``store``
    in the same pass.

    The index (co-occurrence counts and task neighbours, :func:`kg.write.cooccurrence.index_blocks`) is
    derived from the graph for queries' speed; it is kept out of the exports, which hold what was
    read, and the store holds both. A SPARQL server loading the exports loads the index file too.

    The files are written together, chunk by chunk, and replace any
    previous ones only once all are complete (:func:`kg.files.replacing`).
    Each subject's triples are sorted and the subjects come in a fixed order
    (that of :func:`to_triples` for a networkx graph, IRI order for an
    rdflib graph), so rebuilds give identical files.

    Parameters
    ----------
    graph : networkx.MultiDiGraph or rdflib.Graph
        A graph from :func:`kg.link.graph.build_graph`, exported as by
        :func:`to_triples` (the fast path: time linear in the triples, and
        memory for one chunk of them), or an RDF graph.
    stem : path
        The output path without extension; its folder is created if missing.
    base : str, keyword-only
        The base IRI, used only when ``graph`` is a networkx graph.
    formats : iterable of str, keyword-only
        Which of :data:`RDF_FORMATS` to write (none: only fill ``store``).
    store : pyoxigraph.Store, keyword-only
        A store to add every triple to, in the default graph.
    last : LastBuild, keyword-only
        The graph's last build: each block found in it unchanged is copied
        from its files, not serialized again.
    patch : bool, keyword-only
        With ``last``: ``store`` is a copy of that build's store, to be
        patched: the triples of its blocks that are gone are removed and
        those of the new blocks added.
    tally : Tally, keyword-only
        Told what was written: the blocks, those serialized anew, those new
        since ``last``, and where each block went (for the next build).

    Returns
    -------
    dict
        ``{"ttl": Path, "nt": Path, "jsonld": Path}`` for the formats written, and
        ``"index"`` for a networkx graph.
        Turtle and N-Triples are pyoxigraph's; the JSON-LD is compacted with
        the prefixes of :data:`kg.vocab.NAMESPACES`, one node object per line,
        ``rdf:type`` as ``@type`` and typed literals as ``{"@value", "@type"}``.

    Example
    -------
    >>> import tempfile
    >>> from rdflib import Graph, Literal, URIRef
    >>> from rdflib.namespace import DCTERMS
    >>> rdf = Graph()
    >>> _ = rdf.add((URIRef("https://example.org/p1"), DCTERMS.title, Literal('A "title"')))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     paths = write_rdf(rdf, Path(folder) / "kg")
    ...     print(sorted(paths), paths["nt"].read_text(encoding="utf-8"), end="")
    ...     print(paths["jsonld"].read_text(encoding="utf-8").splitlines()[-3].strip())
    ['jsonld', 'nt', 'ttl'] <https://example.org/p1> <http://purl.org/dc/terms/title> "A \\"title\\"" .
    {"@id": "https://example.org/p1", "dcterms:title": "A \\"title\\""}
    """
    formats = [ext for ext in RDF_FORMATS if ext in set(formats)]
    stem = Path(stem)
    tally = tally if tally is not None else Tally()
    paths = {ext: stem.with_name(f"{stem.name}.{ext}") for ext in formats}
    if isinstance(graph, Graph):
        with replacing(*paths.values()) as files:
            _write_blocks(_rdflib_blocks(graph), dict(zip(paths, files)), store, Placed(), tally)
        return paths
    paths["index"] = stem.with_name(f"{stem.name}{INDEX_SUFFIX}")
    patch = patch and last is not None and store is not None
    old = last.opened if last is not None else {}
    matched = {stream: np.zeros(len(placed), dtype=bool) for stream, placed in last.placed.items()} if last else {}
    added: list[bytes] = []
    with replacing(*paths.values()) as files:
        *data, index = files
        for stream, blocks, outputs in (("export", export_blocks(graph, base), dict(zip(formats, data))),
                                        ("index", index_blocks(graph, base), {"nt": index})):
            tally.placed[stream] = Placed()
            _write_blocks(blocks, outputs, store, tally.placed[stream], tally,
                          last=last.placed.get(stream) if last else None, old=old.get(stream),
                          matched=matched.get(stream), added=added if patch else None)
        if patch:
            _patch_store(store, last, old, matched, added, tally)
    return paths


#: Triples per chunk, serialized by one call to pyoxigraph per format. Small
#: chunks keep memory flat and are faster than large ones (their terms stay
#: in the CPU's cache); the calls' own cost is negligible from a few hundred.
_CHUNK = 1_000
#: Quads, or bytes of N-Triples, per bulk load into a new store: each load writes new files, and the
#: bulk loader's memory grows with what it is given (1,400 papers, 495k quads at once: 769 MB
#: peak; 50k at a time, 539 MB for a tenth more time).
_STORE_QUADS = 50_000
_STORE_BATCH = 8_000_000


#: The files a block is written to, in the order of a block's places (:class:`Placed`).
PARTS = ("nt", "ttl", "jsonld")
#: Bytes of a block's digest (BLAKE2b): 128 bits, so that millions of blocks never share one.
DIGEST_SIZE = 16


class Placed:
    """Where a stream of blocks (the export, or the index) was written: block by block in order, the
    block's digest, its subject's (8 bytes), and for each of :data:`PARTS` the start and length of its
    bytes in that part's file ``(-1, 0)`` where it was not written; and each file's size and digest
    (BLAKE2b, hex), by which the next build knows the file still holds what was written.

    >>> placed = Placed()
    >>> placed.add(b"d" * 16, "https://e.org/a", {"nt": (0, 10)})
    >>> Placed.from_bytes(placed.to_bytes()).place(0, "nt"), placed.place(0, "ttl")
    ((0, 10), (-1, 0))
    """

    def __init__(self, digests: bytes = b"", subjects: bytes = b""):
        self.digests, self.subjects = bytearray(digests), bytearray(subjects)
        self._places = array.array("q")
        self.files: dict[str, tuple[int, str]] = {}

    def __len__(self) -> int:
        return len(self.digests) // DIGEST_SIZE

    def add(self, digest: bytes, subject: str, places: dict[str, tuple[int, int]]) -> None:
        self.digests += digest
        self.subjects += _subject_digest(subject)
        for part in PARTS:
            self._places.extend(places.get(part, (-1, 0)))

    def place(self, index: int, part: str) -> tuple[int, int]:
        at = (index * len(PARTS) + PARTS.index(part)) * 2
        return self._places[at], self._places[at + 1]

    def to_bytes(self) -> bytes:
        """The bytes :meth:`from_bytes` reads: a JSON line, with the digest of what follows, then the arrays."""
        body = bytes(self.digests) + bytes(self.subjects) + self._places.tobytes()
        header = json.dumps({"blocks": len(self), "files": self.files, "check": _file_digest(body)}).encode()
        return header + b"\n" + body

    @classmethod
    def from_bytes(cls, data: bytes) -> Placed:
        """What :meth:`to_bytes` wrote; ``ValueError`` for bytes it did not write (SQLite checks no
        value it stores: a damaged record would copy wrong bytes from the right files)."""
        try:
            line, rest = data.split(b"\n", 1)
            header = json.loads(line)
            n = header["blocks"]
            if header["check"] != _file_digest(rest) or len(rest) != n * (DIGEST_SIZE + 8 + 2 * 8 * len(PARTS)):
                raise ValueError("its digest or its length is not the one written")
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"not a record of blocks ({error})") from None
        placed = cls(rest[:n * DIGEST_SIZE], rest[n * DIGEST_SIZE:n * (DIGEST_SIZE + 8)])
        placed._places.frombytes(rest[n * (DIGEST_SIZE + 8):])
        placed.files = {part: tuple(file) for part, file in header["files"].items()}
        return placed


class _Finder:
    """The index of each digest among a :class:`Placed`'s blocks, found a chunk at a time with numpy
    (a dict of millions of digests would take hundreds of MB)."""

    def __init__(self, placed: Placed):
        self.words = np.frombuffer(bytes(placed.digests), dtype=np.uint64).reshape(-1, 2)
        self.order = np.argsort(self.words[:, 0], kind="stable")
        self.keys = self.words[self.order, 0]

    def find(self, digests: list[bytes]) -> list[int]:
        """Each digest's index, or -1."""
        if not len(self.keys) or not digests:
            return [-1] * len(digests)
        words = np.frombuffer(b"".join(digests), dtype=np.uint64).reshape(-1, 2)
        at = np.minimum(np.searchsorted(self.keys, words[:, 0]), len(self.keys) - 1)
        candidate = self.order[at]
        found = (self.keys[at] == words[:, 0]) & (self.words[candidate, 1] == words[:, 1])
        return np.where(found, candidate, -1).tolist()


@dataclass
class Tally:
    """What a write did, for the build to say, and where it put each block, for the next build.

    ``placed`` holds each stream's :class:`Placed` (``"export"`` and ``"index"``); ``changed`` the
    subjects of the blocks that are not among the last build's, and ``patched`` whether the store was
    the last build's, patched with the difference.
    """
    changed: list[str] = field(default_factory=list)
    patched: bool = False
    unpatched: str = ""  # why a build that could have been compared with the last wrote everything
    untrusted: list[str] = field(default_factory=list)  # the last build's files found changed (LastBuild.untrusted)
    placed: dict[str, Placed] = field(default_factory=dict)

    def subject_count(self) -> int:
        """The subjects written (a paper's export and its index are two blocks of one subject)."""
        return len({bytes(p.subjects[i:i + 8]) for p in self.placed.values() for i in range(0, len(p.subjects), 8)})


@dataclass
class LastBuild:
    """A graph's last build, to compare with: each stream's :class:`Placed`, and its files, by part
    (the index's N-Triples as the ``"nt"`` of stream ``"index"``)."""
    placed: dict[str, Placed]
    files: dict[str, dict[str, Path]]
    #: The names of its files that are there but no longer hold what it wrote: none of their bytes are copied.
    untrusted: list[str] = field(default_factory=list)

    @functools.cached_property
    def opened(self) -> dict[str, dict[str, "_Positioned"]]:
        """Each stream's files, open to be read by position, that still hold the bytes the last build wrote: their size and
        digest are the recorded ones. Blocks are copied from these bytes, once checked, never trusted by size:
        a byte changed in place or lines sorted would otherwise reappear in every build after. A file that is
        gone is left out; one that is there and changed is left out and named in :attr:`untrusted`."""
        opened: dict[str, dict[str, _Positioned]] = {}
        for stream, files in self.files.items():
            opened[stream] = {}
            for part, path in files.items():
                if not path.is_file() or part not in self.placed[stream].files:
                    continue
                size, digest = self.placed[stream].files[part]
                data = _Positioned(path) if path.stat().st_size == size else None
                if data is not None and data.digest() == digest:
                    opened[stream][part] = data
                else:
                    self.untrusted.append(path.name)
        return opened

    def can_patch(self) -> bool:
        """Whether the store can be patched: the N-Triples of every stream are there to say what to remove."""
        return all("nt" in self.opened.get(stream, {}) for stream in self.placed)


def _write_blocks(blocks: Iterable[Block], files: dict[str, BinaryIO], store: ox.Store | None, placed: Placed,
                  tally: Tally, *, last: Placed | None = None, old: dict | None = None,
                  matched: np.ndarray | None = None, added: list[bytes] | None = None) -> None:
    """Write ``blocks`` to ``files`` and ``store``, recording where each went in ``placed``.

    With ``last`` (where the graph's last build put this stream's blocks) and ``old`` (that build's
    files, by part), a block found there is copied, not serialized; its index is marked in
    ``matched``. The subjects of the others are told to ``tally`` and their N-Triples gathered in
    ``added``, for :func:`_patch_store`. Without ``added``, every block goes into ``store``.
    """
    # A chunk never splits a subject, so the Turtle of consecutive chunks
    # concatenates into the Turtle of the whole once the @prefix lines that
    # pyoxigraph repeats at the top of each are dropped.
    written = [part for part in PARTS if part in files]
    needed = list(dict.fromkeys(["nt", *written]))  # N-Triples fills the store and, next time, patches it
    serializer = _Serializer(needed)
    finder = _Finder(last) if last is not None and old is not None else None
    position = dict.fromkeys(written, 0)

    hashes = {part: _file_hash() for part in written}  # each file's digest, for the next build to check it by

    def emit(part: str, data: bytes) -> int:  # write; return where it started
        at = position[part]
        files[part].write(data)
        hashes[part].update(data)
        position[part] += len(data)
        return at

    if "jsonld" in files:
        emit("jsonld", serializer.jsonld.head())
    if "ttl" in files:
        emit("ttl", serializer.header)
    first = True
    pending: list[bytes] = []
    store_quads: list[ox.Quad] = []
    size = 0
    for chunk in _chunks(blocks, _CHUNK):
        digests = [_digest(block) for block in chunk]
        found = finder.find(digests) if finder is not None else [-1] * len(chunk)
        reused = [index >= 0 and all(last.place(index, part)[0] >= 0 and part in old for part in needed) for index in found]
        made, quads = serializer.serialize([block for block, copy in zip(chunk, reused) if not copy])
        made = iter(made)
        pieces = []
        for index, copy in zip(found, reused):
            if copy:
                pieces.append({part: bytes(old[part][start:start + length])
                               for part in needed for start, length in [last.place(index, part)]})
            else:
                pieces.append(next(made))
        places: list[dict[str, tuple[int, int]]] = [{} for _ in chunk]
        for part in written:  # one write per file and chunk
            data, at = [], position[part]
            for piece, where in zip(pieces, places):
                if part == "jsonld":  # the JSON-LD nodes are a list
                    data.append(b"    " if first else b",\n    ")
                    at += len(data[-1])
                    first = False
                data.append(piece[part])
                where[part] = (at, len(piece[part]))
                at += len(piece[part])
            emit(part, b"".join(data))
        for (subject, _), digest, where in zip(chunk, digests, places):
            placed.add(digest, subject, where)
        if store is not None and added is None:  # the quads just made as they are, the copied N-Triples parsed
            store_quads += quads
            for piece, copy in zip(pieces, reused):
                if copy:
                    pending.append(piece["nt"])
                    size += len(piece["nt"])
            if size >= _STORE_BATCH or len(store_quads) >= _STORE_QUADS:
                _load(store, store_quads, pending)
                store_quads, pending, size = [], [], 0
        if matched is not None:
            for (subject, _), index, piece in zip(chunk, found, pieces):
                if index >= 0:
                    matched[index] = True
                else:
                    tally.changed.append(subject)
                    if added is not None:
                        added.append(piece["nt"])
    if store is not None and added is None:
        _load(store, store_quads, pending)
    if "jsonld" in files:
        emit("jsonld", serializer.jsonld.tail())
    placed.files = {part: (position[part], hashes[part].hexdigest()) for part in written}


def _load(store: ox.Store, quads: list[ox.Quad], n_triples: list[bytes]) -> None:
    if quads:
        store.bulk_extend(quads)
    if n_triples:
        store.bulk_load(b"".join(n_triples), format=ox.RdfFormat.N_TRIPLES)


def _patch_store(store: ox.Store, last: LastBuild, old: dict, matched: dict[str, np.ndarray], added: list[bytes],
                 tally: Tally) -> None:
    """Make ``store``, which holds the blocks of the ``last`` build, hold the blocks just written: the
    triples of the blocks gone (not ``matched``) are removed, then the new blocks' (``added``) loaded,
    with those of kept blocks that share a subject with a block gone, in case a triple was in both."""
    def n_triples(stream: str, index: int) -> bytes:
        start, length = last.placed[stream].place(index, "nt")
        return bytes(old[stream]["nt"][start:start + length])

    def subject(stream: str, index: int) -> bytes:
        return bytes(last.placed[stream].subjects[index * 8:index * 8 + 8])

    gone = [(stream, int(i)) for stream, seen in matched.items() for i in np.flatnonzero(~seen)]
    touched = {subject(stream, i) for stream, i in gone}
    kept = [(stream, int(i)) for stream, seen in matched.items() for i in np.flatnonzero(seen) if subject(stream, int(i)) in touched]
    removed = b"".join(n_triples(stream, i) for stream, i in gone)
    for quad in ox.parse(removed, format=ox.RdfFormat.N_TRIPLES):
        store.remove(quad)
    # In bulk: the store is a copy made for this build, so no reader needs the load to be one transaction.
    store.bulk_load(b"".join(added + [n_triples(stream, i) for stream, i in kept]), format=ox.RdfFormat.N_TRIPLES)
    tally.patched = True


#: What a block's serializations depend on besides the block: the code that writes them and pyoxigraph's.
_SALT = hashlib.blake2b(Path(__file__).read_bytes() + Path(jsonld.__file__).read_bytes() + ox.__version__.encode(),
                        digest_size=16).digest()
#: The code and version blocks were serialized by, in short: a graph written by another is written anew.
SERIALIZATION = _SALT.hex()[:12]


def _digest(block: Block) -> bytes:
    """The digest a block is known by from one build to the next."""
    return hashlib.blake2b(repr(block).encode("utf-8", "backslashreplace"), digest_size=DIGEST_SIZE, key=_SALT).digest()


def _file_hash():
    return hashlib.blake2b(digest_size=DIGEST_SIZE)


def _file_digest(data: bytes) -> str:
    """The digest of ``data`` as :func:`_write_blocks` records a file's."""
    digest = _file_hash()
    digest.update(data)
    return digest.hexdigest()


class _Positioned:
    """A file of the last build, read by position: ``file[start:stop]`` is its bytes there. Read, not
    mapped, so that what a rebuild copies passes through the page cache rather than staying in this
    process (the mapped files of a 100,000-abstract graph, gigabytes, counted as the build's own).

    A rebuild copies the subjects it keeps in the order the file holds them, a few hundred bytes each:
    each read takes :data:`READ_AHEAD` bytes at once and the next pieces are cut from them (one
    system call for thousands of subjects, where one each took 5.7 s of a 20,000-abstract rebuild)."""

    READ_AHEAD = 1 << 18

    def __init__(self, path: Path):
        with path.open("rb") as file:
            self.fd = os.dup(file.fileno())
        weakref.finalize(self, os.close, self.fd)
        self._at, self._read = 0, b""  # the bytes last read and where they start

    def __getitem__(self, where: slice) -> bytes:
        start, stop = where.start, where.stop
        if not (self._at <= start and stop <= self._at + len(self._read)):
            self._at, self._read = start, os.pread(self.fd, max(stop - start, self.READ_AHEAD), start)
        return self._read[start - self._at:stop - self._at]

    def digest(self) -> str:
        """The file's digest, as :func:`_write_blocks` recorded it (BLAKE2b runs at about 1 GB/s: a tenth
        of a second for a conference's files, which a rebuild reads anyway to copy them)."""
        digest, at = _file_hash(), 0
        while chunk := os.pread(self.fd, 1 << 20, at):
            digest.update(chunk)
            at += len(chunk)
        return digest.hexdigest()


def _subject_digest(subject: str) -> bytes:
    return hashlib.blake2b(subject.encode("utf-8", "backslashreplace"), digest_size=8).digest()


class _Serializer:
    """Blocks' N-Triples, Turtle and JSON-LD (those of ``parts``), one of each per block, from one call to
    pyoxigraph per format for all the blocks given."""

    def __init__(self, parts: list[str]):
        self.parts = parts
        self.terms = _OxTerms(make=ox.Quad)  # quads in the default graph: files and stores take them alike
        self.jsonld = JsonLd(_PREFIXES)
        self.header = _turtle_header()

    def serialize(self, blocks: list[Block]) -> tuple[list[dict[str, bytes]], list[ox.Quad]]:
        """Each block's serializations, and all the blocks' quads."""
        if not blocks:
            return [], []
        triples = [self.terms.triples(block) for block in blocks]
        pieces: list[dict[str, bytes]] = [{} for _ in blocks]
        if "nt" in self.parts:
            lines = ox.serialize([t for ts in triples for t in ts], format=ox.RdfFormat.N_TRIPLES).splitlines(keepends=True)
            at = 0
            for piece, ts in zip(pieces, triples):  # N-Triples is one line per triple
                piece["nt"] = b"".join(lines[at:at + len(ts)])
                at += len(ts)
        if "ttl" in self.parts:
            for piece, turtle in zip(pieces, self._turtle(triples)):
                piece["ttl"] = turtle
        if "jsonld" in self.parts:
            for piece, block in zip(pieces, blocks):
                piece["jsonld"] = self.jsonld.node(block).encode("utf-8")
        return pieces, [quad for quads in triples for quad in quads]

    def _turtle(self, triples: list[list[ox.Quad]]) -> list[bytes]:
        """Each block's Turtle statements. pyoxigraph writes a subject's first triple at the start of a
        line and the rest indented (its literals' line breaks escaped), so the statements of many
        subjects part where a line starts unindented."""
        turtle = ox.serialize([t for ts in triples for t in ts], format=ox.RdfFormat.TURTLE, prefixes=_PREFIXES)
        if not turtle.startswith(self.header):
            raise RuntimeError("pyoxigraph's Turtle does not start with the expected @prefix lines.")
        body = turtle[len(self.header):]
        starts = [0] + [match.end() for match in _STATEMENT_START.finditer(body)]
        statements = [body[a:b] for a, b in zip(starts, [*starts[1:], len(body)])]
        if len(statements) != sum(1 for ts in triples if ts):  # the same subject twice in a row: one at a time
            return [self._turtle([ts])[0] if ts else b"" for ts in triples] if len(triples) > 1 else [body]
        made = iter(statements)
        return [next(made) if ts else b"" for ts in triples]


_STATEMENT_START = re.compile(rb"\n(?=[^\t])")


def _turtle_header() -> bytes:
    probe = [ox.Triple(ox.NamedNode("urn:x"), ox.NamedNode("urn:x"), ox.NamedNode("urn:x"))]
    with_prefixes = ox.serialize(probe, format=ox.RdfFormat.TURTLE, prefixes=_PREFIXES)
    body = ox.serialize(probe, format=ox.RdfFormat.TURTLE)
    if not with_prefixes.endswith(body):
        raise RuntimeError("pyoxigraph's Turtle is not its @prefix lines followed by the triples.")
    return with_prefixes[: len(with_prefixes) - len(body)]


def _chunks(blocks: Iterable[Block], size: int) -> Iterator[list[Block]]:
    """Consecutive blocks holding about ``size`` triples in all."""
    chunk: list[Block] = []
    count = 0
    for block in blocks:
        chunk.append(block)
        count += len(block[1])
        if count >= size:
            yield chunk
            chunk, count = [], 0
    if chunk:
        yield chunk


def _rdflib_blocks(rdf: Graph) -> list[Block]:
    """An rdflib graph's triples as blocks: subjects in order (a blank node as ``"_:id"``), each
    subject's pairs sorted by :func:`kg.write.triples.pair_key`."""
    def term(t) -> Term:
        if isinstance(t, URIRef):
            return str(t)
        if isinstance(t, BNode):
            return f"_:{t}"
        if t.language:
            return (str(t), None, t.language)
        return (str(t), None if t.datatype is None or t.datatype == XSD.string else str(t.datatype), None)

    by_subject: dict[str, list[tuple[str, Term]]] = defaultdict(list)
    for s, p, o in rdf:
        by_subject[term(s)].append((str(p), term(o)))
    return [(subject, sorted(by_subject[subject], key=pair_key)) for subject in sorted(by_subject)]


class _OxTerms:
    """pyoxigraph triples of blocks.

    A term costs more to make than to look up, and a paper's IRI, its
    entities' and the vocabulary's recur in every statement, so terms are
    kept: the vocabulary's (predicates, classes, datatypes) for good, the
    others until ``limit`` of them are held.
    """

    def __init__(self, limit: int = 50_000, *, make=ox.Triple):
        self.make = make  # ox.Triple, or ox.Quad (in the default graph) for a store
        self.vocabulary: dict[str, ox.NamedNode | ox.BlankNode] = {}
        self.recent: dict[str, ox.NamedNode | ox.BlankNode] = {}
        self.limit = limit

    def node(self, iri: str) -> ox.NamedNode | ox.BlankNode:
        term = self.recent.get(iri)
        if term is None:
            if len(self.recent) >= self.limit:
                self.recent.clear()
            term = self.recent[iri] = ox.BlankNode(iri[2:]) if iri.startswith("_:") else ox.NamedNode(iri)
        return term

    def word(self, iri: str) -> ox.NamedNode | ox.BlankNode:
        term = self.vocabulary.get(iri)
        if term is None:
            term = self.vocabulary[iri] = self.node(iri)
        return term

    def triples(self, block: Block) -> list[ox.Triple]:
        # The hottest loop of an export: lookups inlined.
        subject, pairs = block
        recent, vocabulary, T, L = self.recent, self.vocabulary, self.make, ox.Literal
        s = self.node(subject)
        triples = []
        for p, o in pairs:
            if isinstance(o, str):
                term = recent.get(o) or self.node(o)
            elif o[2] is not None:
                term = L(o[0], language=o[2])
            elif o[1] is None:
                term = L(o[0])
            else:
                term = L(o[0], datatype=vocabulary.get(o[1]) or self.word(o[1]))
            triples.append(T(s, vocabulary.get(p) or self.word(p), term))
        return triples
