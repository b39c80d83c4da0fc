"""The export in pyoxigraph's terms: as triples (:func:`to_triples`), and written (:func:`write_rdf`)
to ``.ttl``, ``.nt`` and ``.jsonld``, the index ``.index.nt`` and the store in one pass over the
blocks of :mod:`kg.rdf` and :mod:`kg.rdf_index`, chunk by chunk, in time linear in the number of
triples and with memory for one chunk of them.

Turtle and N-Triples are pyoxigraph's, the JSON-LD :mod:`kg.rdf_jsonld`'s; the files replace any
previous ones only once all are complete (:func:`kg.files.replacing`).
"""
from __future__ import annotations

import itertools
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import networkx as nx
import pyoxigraph as ox
from rdflib import BNode, Graph, URIRef
from rdflib.namespace import XSD

from . import vocab
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
              store: ox.Store | None = None) -> dict[str, Path]:
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
        A store to add every triple to, in the default graph, from the
        triples in memory (no file is parsed back).

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
    paths = {ext: stem.with_name(f"{stem.name}.{ext}") for ext in formats}
    if isinstance(graph, Graph):
        with replacing(*paths.values()) as files:
            _write_blocks(_rdflib_blocks(graph), dict(zip(paths, files)), store)
        return paths
    paths["index"] = stem.with_name(f"{stem.name}{INDEX_SUFFIX}")
    with replacing(*paths.values()) as files:
        *data, index = files
        _write_blocks(export_blocks(graph, base), dict(zip(formats, data)), store)
        _write_blocks(index_blocks(graph, base), {"nt": index}, store)
    return paths


#: Triples per chunk, serialized by one call to pyoxigraph per format. Small
#: chunks keep memory flat and are faster than large ones (their terms stay
#: in the CPU's cache); the calls' own cost is negligible from a few hundred.
_CHUNK = 1_000
#: Quads per bulk insertion into a store: each insertion writes new files, and the
#: bulk loader's memory grows with what it is given (1,400 papers, 495k quads: 250k per
#: insertion, 769 MB peak; 50k, 539 MB for a tenth more time).
_STORE_BATCH = 50_000


def _write_blocks(blocks: Iterable[Block], files: dict[str, BinaryIO], store: ox.Store | None = None) -> None:
    # A chunk never splits a subject, so the Turtle of consecutive chunks
    # concatenates into the Turtle of the whole once the @prefix lines that
    # pyoxigraph repeats at the top of each are dropped.
    header = _turtle_header()
    terms = _OxTerms(make=ox.Quad)  # quads in the default graph: files and stores take them alike
    jsonld = JsonLd(_PREFIXES)
    if "jsonld" in files:
        files["jsonld"].write(jsonld.head())
    first = True
    pending: list[ox.Quad] = []
    for chunk in _chunks(blocks, _CHUNK):
        quads = [quad for block in chunk for quad in terms.triples(block)]
        if "nt" in files:
            files["nt"].write(ox.serialize(quads, format=ox.RdfFormat.N_TRIPLES))
        if "ttl" in files:
            turtle = ox.serialize(quads, format=ox.RdfFormat.TURTLE, prefixes=_PREFIXES)
            if not turtle.startswith(header):
                raise RuntimeError("pyoxigraph's Turtle does not start with the expected @prefix lines.")
            files["ttl"].write(turtle if first else turtle[len(header):])
        if "jsonld" in files:
            files["jsonld"].write(jsonld.nodes(chunk, first=first))
        if store is not None:
            pending += quads
            if len(pending) >= _STORE_BATCH:
                store.bulk_extend(pending)
                pending = []
        first = False
    if store is not None and pending:
        store.bulk_extend(pending)
    if "jsonld" in files:
        files["jsonld"].write(jsonld.tail())


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
