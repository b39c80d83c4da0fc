"""RDF: export the knowledge graph as triples, write it to disk and validate it.

The networkx graph of :mod:`kg.graph` becomes an :class:`rdflib.Graph` using
the terms of ``ontology/kg.ttl`` (mirrored by :mod:`kg.vocab`). Every
paper -> entity edge is asserted as a plain triple and, once per piece of
evidence, reified as a ``kg:Statement`` pointing into the paper's abstract
with Web Annotation selectors. No blank nodes are written, so two exports of
the same graph compare triple for triple.
"""
from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import quote

import networkx as nx
import pyoxigraph as ox
import pyshacl
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SKOS, XSD

from . import vocab
from .vocab import KG, OA, SCHEMA

__all__ = ["to_rdf", "write_rdf", "validate"]

_PREFIXES = {prefix: str(ns) for prefix, ns in vocab.NAMESPACES.items()}


def to_rdf(G: nx.MultiDiGraph, *, base: str = vocab.DEFAULT_BASE) -> Graph:
    """The RDF graph of a knowledge graph built by :func:`kg.graph.build_graph`.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        Paper and entity nodes and paper -> entity role edges, as described
        in :mod:`kg.graph`.
    base : str, keyword-only
        The IRI every paper, entity, statement and extractor IRI starts with.

    Returns
    -------
    rdflib.Graph
        Papers typed ``kg:Paper``, entities typed with their ``kg:`` class, one
        ``paper kg:<role> entity`` triple per edge and one ``kg:Statement`` per
        piece of evidence (its IRI from :func:`kg.vocab.statement_iri`, with
        ``#pos`` and ``#quote`` selectors). Evidence items that share a
        statement IRI (same paper, role, entity and start) are merged, keeping
        the most confident.

    Raises
    ------
    ValueError
        If a node's ``kind`` is neither ``"Paper"`` nor one of
        ``kg.vocab.ENTITY_TYPES``, or an edge's role is not in ``kg.vocab.ROLES``.

    Example
    -------
    >>> from kg.graph import build_graph
    >>> from kg.model import Paper, Mention, Role, PaperExtraction, Entity
    >>> ex = PaperExtraction(Paper("p1", "We propose GRPO."), [(0, 16)],
    ...     [Mention(11, 15, "GRPO", "Method", 0, 0.9, "rules")], [Role(0, "proposes", 0.9)], {})
    >>> G = build_graph([ex], [Entity("GRPO", "Method", "GRPO", [], [("p1", 0)])])
    >>> rdf = to_rdf(G, base="https://example.org/kg/")
    >>> paper = vocab.paper_iri("https://example.org/kg/", "p1")
    >>> sorted(str(o) for o in rdf.objects(paper, KG.proposes))
    ['https://example.org/kg/method/GRPO']
    >>> [str(s) for s in rdf.subjects(RDF.subject, paper)]
    ['https://example.org/kg/statement/3827a9d4cae9c1c7']
    >>> len(rdf), validate(rdf)[0]
    (26, True)
    """
    rdf = Graph(bind_namespaces="none")
    for prefix, ns in vocab.NAMESPACES.items():
        rdf.bind(prefix, ns)
    iris = {node: _node_iri(node, data, base) for node, data in G.nodes(data=True)}
    for node, data in G.nodes(data=True):
        if data["kind"] == "Paper":
            _add_paper(rdf, iris[node], data)
        else:
            _add_entity(rdf, iris[node], data)
    for paper, entity, role, data in G.edges(keys=True, data=True):
        _add_edge(rdf, iris[paper], role, iris[entity], data["evidence"],
                  paper_id=G.nodes[paper]["paper_id"], key=G.nodes[entity]["key"], base=base)
    return rdf


def _node_iri(node: str, data: dict, base: str) -> URIRef:
    kind = data.get("kind")
    if kind == "Paper":
        return vocab.paper_iri(base, data["paper_id"])
    if kind in vocab.ENTITY_TYPES:
        return vocab.entity_iri(base, kind, data["key"])
    raise ValueError(f"Node {node!r} has kind {kind!r}; expected 'Paper' or one of "
                     f"{', '.join(vocab.ENTITY_TYPES)}. Build the graph with kg.graph.build_graph.")


def _add_paper(rdf: Graph, paper: URIRef, data: dict) -> None:
    rdf.add((paper, RDF.type, KG.Paper))
    rdf.add((paper, DCTERMS.identifier, Literal(data["paper_id"])))
    rdf.add((paper, DCTERMS.abstract, Literal(data["abstract"])))
    rdf.add((paper, RDFS.label, Literal(data["label"])))
    for prop, value in ((DCTERMS.title, data.get("title")), (KG.venue, data.get("venue")),
                        (KG.sourceFile, data.get("source_file"))):
        if value:
            rdf.add((paper, prop, Literal(value)))
    if data.get("source_file"):
        rdf.add((paper, KG.sourceLine, Literal(int(data.get("source_line") or 0))))
    if data.get("year") is not None:
        rdf.add((paper, DCTERMS.date, Literal(f"{int(data['year']):04d}", datatype=XSD.gYear)))
    for author in data.get("authors") or ():
        rdf.add((paper, DCTERMS.creator, Literal(author)))
    for keyword in data.get("keywords") or ():
        rdf.add((paper, SCHEMA.keywords, Literal(keyword)))
    url = _url_iri(data.get("url") or "")
    if url is not None:
        rdf.add((paper, SCHEMA.url, url))


def _url_iri(url: str) -> URIRef | None:
    # A paper's URL comes from the input, not from vocab: percent-encode what
    # an IRI may not contain (spaces, quotes, <>) and drop it when it still
    # isn't an absolute IRI, rather than write a file no parser accepts.
    iri = quote(url.strip(), safe=":/?#[]@!$&'()*+,;=%~")
    try:
        ox.NamedNode(iri)
    except ValueError:
        return None
    return URIRef(iri)


def _add_entity(rdf: Graph, entity: URIRef, data: dict) -> None:
    rdf.add((entity, RDF.type, vocab.class_iri(data["kind"])))
    rdf.add((entity, SKOS.prefLabel, Literal(data["label"])))
    rdf.add((entity, RDFS.label, Literal(data["label"])))
    for alias in data.get("aliases") or ():
        rdf.add((entity, SKOS.altLabel, Literal(alias)))
    rdf.add((entity, KG.paperCount, Literal(int(data["papers"]))))


def _add_edge(rdf: Graph, paper: URIRef, role: str, entity: URIRef, evidence: Iterable[dict],
              *, paper_id: str, key: str, base: str) -> None:
    predicate = vocab.role_iri(role)
    rdf.add((paper, predicate, entity))
    # One statement per IRI: two items with the same start would otherwise
    # give one statement two confidences and two selectors.
    best: dict[URIRef, dict] = {}
    for item in evidence:
        statement = vocab.statement_iri(base, paper_id, role, key, item["start"])
        if statement not in best or item["confidence"] > best[statement]["confidence"]:
            best[statement] = item
    for statement, item in best.items():
        extractor = _add_extractor(rdf, item["extractor"], base)
        position_selector = vocab.selector_iri(statement, "pos")
        quote_selector = vocab.selector_iri(statement, "quote")
        rdf.add((statement, RDF.type, KG.Statement))
        rdf.add((statement, RDF.subject, paper))
        rdf.add((statement, RDF.predicate, predicate))
        rdf.add((statement, RDF.object, entity))
        rdf.add((statement, KG.confidence, Literal(f"{item['confidence']:.3f}", datatype=XSD.decimal)))
        rdf.add((statement, KG.sentence, Literal(item["sentence"])))
        rdf.add((statement, PROV.wasDerivedFrom, paper))
        rdf.add((statement, PROV.wasAttributedTo, extractor))
        rdf.add((statement, OA.hasSelector, position_selector))
        rdf.add((statement, OA.hasSelector, quote_selector))
        rdf.add((position_selector, RDF.type, OA.TextPositionSelector))
        rdf.add((position_selector, OA.start, Literal(item["start"], datatype=XSD.nonNegativeInteger)))
        rdf.add((position_selector, OA.end, Literal(item["end"], datatype=XSD.nonNegativeInteger)))
        rdf.add((quote_selector, RDF.type, OA.TextQuoteSelector))
        rdf.add((quote_selector, OA.exact, Literal(item["text"])))


def _add_extractor(rdf: Graph, name: str, base: str) -> URIRef:
    # Extractor names may carry a version after the last slash ("rules/1").
    extractor = vocab.extractor_iri(base, name)
    rdf.add((extractor, RDF.type, KG.Extractor))
    rdf.add((extractor, RDFS.label, Literal(name)))
    if "/" in name:
        rdf.add((extractor, KG.version, Literal(name.rsplit("/", 1)[1])))
    return extractor


def _stable_jsonld(data: bytes) -> bytes:
    """rdflib's compacted JSON-LD with nodes and values in a fixed order, so rebuilds diff cleanly."""
    document = json.loads(data)
    nodes = document.get("@graph", [])
    for node in nodes:
        for key, value in node.items():
            if isinstance(value, list):
                node[key] = sorted(value, key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
    nodes.sort(key=lambda n: str(n.get("@id", "")))
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True).encode("utf-8")


def write_rdf(graph: nx.MultiDiGraph | Graph, stem: str | os.PathLike, *,
              base: str = vocab.DEFAULT_BASE) -> dict[str, Path]:
    """Write ``stem.ttl``, ``stem.nt`` and ``stem.jsonld`` atomically.

    Each file is written to a temporary file in the same folder and moved into
    place (``os.replace``) only once all three are written, so a failure while
    serializing or writing leaves any previous files untouched.

    Parameters
    ----------
    graph : networkx.MultiDiGraph or rdflib.Graph
        A graph from :func:`kg.graph.build_graph` (exported with
        :func:`to_rdf`) or an RDF graph.
    stem : path
        The output path without extension; its folder is created if missing.
    base : str, keyword-only
        The base IRI, used only when ``graph`` is a networkx graph.

    Returns
    -------
    dict
        ``{"ttl": Path, "nt": Path, "jsonld": Path}``.

    Example
    -------
    >>> import tempfile
    >>> from rdflib import Graph, Literal, URIRef
    >>> rdf = Graph()
    >>> _ = rdf.add((URIRef("https://example.org/p1"), DCTERMS.title, Literal('A "title"')))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     paths = write_rdf(rdf, Path(folder) / "kg")
    ...     print(sorted(paths), paths["nt"].read_text(encoding="utf-8"), end="")
    ['jsonld', 'nt', 'ttl'] <https://example.org/p1> <http://purl.org/dc/terms/title> "A \\"title\\"" .
    """
    rdf = graph if isinstance(graph, Graph) else to_rdf(graph, base=base)
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    # pyoxigraph writes the same triples as rdflib (tests/test_rdf.py checks
    # the round trip) much faster: 170k triples to Turtle in 0.1 s, where
    # rdflib took 4 minutes. rdflib does JSON-LD, compacted with our
    # prefixes. Sorting makes the files reproducible (diffable) and groups
    # each subject's triples in Turtle.
    triples = sorted(_oxigraph_triples(rdf), key=str)
    writers: dict[str, Callable[[], bytes]] = {
        "ttl": lambda: ox.serialize(triples, format=ox.RdfFormat.TURTLE, prefixes=_PREFIXES),
        "nt": lambda: ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES),
        "jsonld": lambda: _stable_jsonld(rdf.serialize(format="json-ld", context=_PREFIXES, encoding="utf-8")),
    }
    paths = {ext: stem.with_name(f"{stem.name}.{ext}") for ext in writers}
    temps: dict[str, Path] = {}
    try:
        for ext, serialize in writers.items():
            # open(..., "xb") rather than mkstemp: the file gets the usual
            # umask permissions instead of 0600.
            temps[ext] = stem.with_name(f".{stem.name}.{ext}.{uuid.uuid4().hex}.tmp")
            with open(temps[ext], "xb") as f:
                f.write(serialize())
                f.flush()
                os.fsync(f.fileno())
        for ext, temp in temps.items():
            os.replace(temp, paths[ext])
    finally:
        for temp in temps.values():
            temp.unlink(missing_ok=True)
    return paths


def _oxigraph_triples(rdf: Graph) -> list[ox.Triple]:
    terms: dict = {}

    def term(t):
        if t not in terms:
            if isinstance(t, URIRef):
                terms[t] = ox.NamedNode(t)
            elif isinstance(t, BNode):
                terms[t] = ox.BlankNode(t)
            elif t.language:
                terms[t] = ox.Literal(str(t), language=t.language)
            elif t.datatype is not None and t.datatype != XSD.string:
                terms[t] = ox.Literal(str(t), datatype=ox.NamedNode(t.datatype))
            else:
                terms[t] = ox.Literal(str(t))
        return terms[t]

    return [ox.Triple(term(s), term(p), term(o)) for s, p, o in rdf]


def validate(rdf_graph: Graph) -> tuple[bool, str]:
    """Check an export against the SHACL shapes of ``ontology/shapes.ttl``.

    The shapes name every class and role explicitly, so no inference runs and
    the ontology is not mixed in: pyshacl would clone the data graph for it
    (about a quarter more time), and RDFS inference would add types
    (``kg:Entity``, ``skos:Concept``) that an export never asserts.

    Parameters
    ----------
    rdf_graph : rdflib.Graph
        An export, e.g. from :func:`to_rdf`. It is not modified.

    Returns
    -------
    tuple of (bool, str)
        Whether the graph conforms, and pyshacl's report text (plus one
        entry per statement whose edge is not asserted, a check SHACL Core
        can't express and which runs here as one pass rather than as a
        per-node SPARQL constraint).

    Example
    -------
    >>> from rdflib import Graph
    >>> rdf = Graph()
    >>> _ = rdf.add((vocab.paper_iri(vocab.DEFAULT_BASE, "p1"), RDF.type, KG.Paper))
    >>> conforms, report = validate(rdf)
    >>> conforms
    False
    >>> "dcterms:abstract" in report
    True
    """
    shapes = Graph().parse(data=vocab.SHAPES_FILE.read_text(encoding="utf-8"), format="turtle")
    conforms, _, report = pyshacl.validate(rdf_graph, shacl_graph=shapes, inference="none")
    unasserted = _unasserted_statements(rdf_graph)
    if unasserted:
        report = report.replace("Conforms: True", "Conforms: False", 1) + "".join(
            f"Constraint Violation in kg.rdf.validate:\n\tFocus Node: <{statement}>\n"
            f"\tMessage: The statement's edge <{s}> <{p}> <{o}> is not asserted.\n"
            for statement, (s, p, o) in unasserted)
    return bool(conforms) and not unasserted, report


def _unasserted_statements(rdf: Graph) -> list[tuple[URIRef, tuple]]:
    # Queries that ignore evidence must still see every extracted edge.
    missing = []
    for statement in rdf.subjects(RDF.type, KG.Statement):
        edge = tuple(rdf.value(statement, p) for p in (RDF.subject, RDF.predicate, RDF.object))
        if None not in edge and edge not in rdf:
            missing.append((statement, edge))
    return missing
