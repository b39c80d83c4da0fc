"""The export in pyoxigraph's terms: as triples (:func:`to_triples`), and written (:func:`write_rdf`)
to ``.ttl``, ``.nt`` and ``.jsonld``, the index ``.index.nt`` and the store in one pass over the
blocks of :mod:`kg.rdf` and :mod:`kg.rdf_index`, chunk by chunk, in time linear in the number of
triples and with memory for one chunk of them.

Turtle and N-Triples are pyoxigraph's, the JSON-LD :mod:`kg.rdf_jsonld`'s; the files replace any
previous ones only once all are complete (:func:`kg.files.replacing`).
"""
from __future__ import annotations

import hashlib
import itertools
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import networkx as nx
import pyoxigraph as ox
from rdflib import BNode, Graph, URIRef
from rdflib.namespace import XSD

from . import rdf_jsonld, vocab
from .cache import DIGEST_SIZE, BlockCache
from .errors import KGError
from .files import replacing
from .rdf import Block, Term, export_blocks, pair_key
from .rdf_index import index_blocks
from .rdf_jsonld import JsonLd
from .store import INDEX_SUFFIX  # the index: N-Triples of its own, whatever the formats

__all__ = ["to_triples", "write_rdf", "RDF_FORMATS"]

_PREFIXES = {prefix: str(ns) for prefix, ns in vocab.NAMESPACES.items()}


def to_triples(G: nx.MultiDiGraph, *, base: str = vocab.DEFAULT_BASE) -> Iterator[ox.Triple]:
    """The RDF triples of a knowledge graph built by :func:`kg.graph.build_graph`, as pyoxigraph terms.

    The blocks of the export (:func:`kg.rdf.export_blocks`, whose order they
    keep) and then of its index (:func:`kg.rdf_index.index_blocks`), triple by
    triple: the triples :func:`write_rdf` writes to the files and the store.
    Parameters and errors are those of :func:`kg.rdf.export_blocks`.

    Example
    -------
    >>> from kg.graph import build_graph
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
              store: ox.Store | None = None, cache: BlockCache | None = None,
              previous: tuple[bytes, bytes] | None = None, tally: Tally | None = None) -> dict[str, Path]:
    """Write ``stem.ttl``, ``stem.nt`` and ``stem.jsonld`` (or those of ``formats``) and, for a
    networkx graph, its index ``stem.index.nt``, atomically; add the same triples to ``store``
    in the same pass.

    The index (co-occurrence counts and task neighbours, :func:`kg.rdf_index.index_blocks`) is
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
        A graph from :func:`kg.graph.build_graph`, exported as by
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
    cache : kg.cache.BlockCache, keyword-only
        Where each block's serializations are kept: a block found there is
        copied, not serialized again.
    previous : (bytes, bytes), keyword-only
        With ``cache``: the block and subject digests (:class:`Tally`) of the
        graph ``store`` already holds, a copy of an earlier build's store. The
        store is then patched: the triples of that build's blocks that are gone
        are removed and those of the new blocks added.
    tally : Tally, keyword-only
        Told what was written: the blocks, those serialized anew, those new
        since ``previous``, and every block's digest.

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
            _write_blocks(_rdflib_blocks(graph), dict(zip(paths, files)), store, tally, cache=cache)
        return paths
    paths["index"] = stem.with_name(f"{stem.name}{INDEX_SUFFIX}")
    patching = previous is not None and cache is not None and store is not None
    known = set(_records(previous[0], DIGEST_SIZE)) if previous is not None else None
    added: list[bytes] = []
    with replacing(*paths.values()) as files:
        *data, index = files
        for blocks, outputs in ((export_blocks(graph, base), dict(zip(formats, data))), (index_blocks(graph, base), {"nt": index})):
            _write_blocks(blocks, outputs, None if patching else store, tally, cache=cache, previous=known,
                          added=added if patching else None)
        if patching:
            _patch_store(store, cache, previous, tally, added)
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


@dataclass
class Tally:
    """What a write did, for the build to say, and the blocks it wrote, for the next build to compare with.

    ``digests`` and ``subjects`` hold, block by block in the order written, the block's digest and its
    subject's (:data:`kg.cache.DIGEST_SIZE` and 8 bytes each); ``changed`` the subjects of the blocks
    that are not among ``previous``'s (the graph's last build), ``serialized`` how many blocks were
    serialized, not copied from the cache, and ``patched`` whether the store was the last build's,
    patched with the difference.
    """
    blocks: int = 0
    serialized: int = 0
    changed: list[str] = field(default_factory=list)
    patched: bool = False
    unpatched: str = ""  # why a build with a block cache wrote everything
    digests: bytearray = field(default_factory=bytearray)
    subjects: bytearray = field(default_factory=bytearray)

    def subject_count(self) -> int:
        """The subjects written (a paper's export and its index are two blocks of one subject)."""
        return len(set(_records(bytes(self.subjects), 8)))


def _write_blocks(blocks: Iterable[Block], files: dict[str, BinaryIO], store: ox.Store | None, tally: Tally, *,
                  cache: BlockCache | None = None, previous: set[bytes] | None = None,
                  added: list[bytes] | None = None) -> None:
    """Write ``blocks`` to ``files`` and ``store``, serializing only the blocks ``cache`` lacks.

    Each block's N-Triples, Turtle and JSON-LD are made once and kept in ``cache``, and every
    block's N-Triples is loaded into ``store``. The subjects of the blocks not in ``previous`` (the
    digests of the graph's last build) are told to ``tally``, and their N-Triples gathered in
    ``added``: :func:`_patch_store` loads them into the last build's store once its stale triples are gone.
    """
    # A chunk never splits a subject, so the Turtle of consecutive chunks
    # concatenates into the Turtle of the whole once the @prefix lines that
    # pyoxigraph repeats at the top of each are dropped.
    parts = [part for part in ("nt", "ttl", "jsonld") if part in files]
    if (store is not None or cache is not None) and "nt" not in parts:
        parts.insert(0, "nt")  # the store is loaded, and patched, from N-Triples
    serializer = _Serializer(parts)
    if "jsonld" in files:
        files["jsonld"].write(serializer.jsonld.head())
    first = True
    pending: list[bytes] = []
    store_quads: list[ox.Quad] = []
    size = 0
    for chunk in _chunks(blocks, _CHUNK):
        digests = [_digest(block) for block in chunk]
        # Only a graph built before has blocks to find; a first build's are all new.
        known = cache.get(digests, parts) if cache is not None and previous is not None else {}
        todo = [block for block, digest in zip(chunk, digests) if digest not in known]
        made, quads = serializer.serialize(todo)
        made = iter(made)
        pieces = [known.get(digest) or next(made) for digest in digests]
        if cache is not None and todo:
            cache.put((digest, piece) for digest, piece in zip(digests, pieces) if digest not in known)
        tally.blocks += len(chunk)
        tally.serialized += len(todo)
        for block, digest in zip(chunk, digests):
            tally.digests += digest
            tally.subjects += _subject_digest(block[0])
        if "nt" in files:
            files["nt"].write(b"".join(piece["nt"] for piece in pieces))
        if "ttl" in files:
            files["ttl"].write((serializer.header if first else b"") + b"".join(piece["ttl"] for piece in pieces))
        if "jsonld" in files:
            files["jsonld"].write((b"" if first else b",\n") + b",\n".join(b"    " + piece["jsonld"] for piece in pieces))
        if store is not None:  # the quads just made as they are, the N-Triples of the blocks found parsed
            store_quads += quads
            for digest in digests:
                if digest in known:
                    pending.append(known[digest]["nt"])
                    size += len(known[digest]["nt"])
            if size >= _STORE_BATCH or len(store_quads) >= _STORE_QUADS:
                _load(store, store_quads, pending)
                store_quads, pending, size = [], [], 0
        if previous is not None:
            for (subject, _), digest, piece in zip(chunk, digests, pieces):
                if digest not in previous:
                    tally.changed.append(subject)
                    if added is not None:
                        added.append(piece["nt"])
        first = False
    if store is not None:
        _load(store, store_quads, pending)
    if "jsonld" in files:
        files["jsonld"].write(serializer.jsonld.tail())


def _load(store: ox.Store, quads: list[ox.Quad], n_triples: list[bytes]) -> None:
    if quads:
        store.bulk_extend(quads)
    if n_triples:
        store.bulk_load(b"".join(n_triples), format=ox.RdfFormat.N_TRIPLES)


def _patch_store(store: ox.Store, cache: BlockCache, previous: tuple[bytes, bytes], tally: Tally,
                 added: list[bytes]) -> None:
    """Make ``store``, which holds the blocks of ``previous`` (their digests and their subjects'), hold
    those of ``tally`` instead: the triples of the blocks gone are removed, then the new blocks'
    (``added``) are loaded, with those of kept blocks that share a subject with a block gone, in
    case a triple was in both."""
    digests, subjects = _records(previous[0], DIGEST_SIZE), _records(previous[1], 8)
    now = set(_records(bytes(tally.digests), DIGEST_SIZE))
    gone = [digest for digest in digests if digest not in now]
    touched = {subject for digest, subject in zip(digests, subjects) if digest not in now}
    kept = [digest for digest, subject in zip(digests, subjects) if subject in touched and digest in now]
    stored = cache.get(gone + kept, ("nt",))
    if len(stored) < len(set(gone + kept)):
        raise KGError(f"The build cache {cache.path} lacks blocks of the last build: remove it and build again.")
    for quad in ox.parse(b"".join(stored[digest]["nt"] for digest in gone), format=ox.RdfFormat.N_TRIPLES):
        store.remove(quad)
    store.load(b"".join(added + [stored[digest]["nt"] for digest in kept]), format=ox.RdfFormat.N_TRIPLES)
    tally.patched = True


def _records(blob: bytes, size: int) -> list[bytes]:
    return [blob[i:i + size] for i in range(0, len(blob), size)]


#: What a block's serializations depend on besides the block: the code that writes them and pyoxigraph's.
_SALT = hashlib.blake2b(Path(__file__).read_bytes() + Path(rdf_jsonld.__file__).read_bytes() + ox.__version__.encode(),
                        digest_size=16).digest()


#: The code and version blocks were serialized by, in short: a graph written by another is not patched.
SERIALIZATION = _SALT.hex()[:12]


def _digest(block: Block) -> bytes:
    """The digest a block's serializations are kept under (:class:`kg.cache.BlockCache`)."""
    return hashlib.blake2b(repr(block).encode("utf-8", "backslashreplace"), digest_size=DIGEST_SIZE, key=_SALT).digest()


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
    subject's pairs sorted by :func:`kg.rdf.pair_key`."""
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
