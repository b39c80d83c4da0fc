"""The export as an :class:`rdflib.Graph`, and its check against the SHACL shapes of
``ontology/shapes.ttl``: for validation, tests and small graphs (rdflib is slow beyond some 100k
triples; files are written by :func:`kg.write.serialize.write_rdf`).
"""
from __future__ import annotations

import itertools

import networkx as nx
import pyshacl
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF

from .. import vocab
from .triples import Term, export_blocks
from .cooccurrence import index_blocks
from ..vocab import KG

__all__ = ["to_rdf", "validate"]


def to_rdf(G: nx.MultiDiGraph, *, base: str = vocab.DEFAULT_BASE) -> Graph:
    """The RDF graph of a knowledge graph built by :func:`kg.link.graph.build_graph`.

    The triples of :func:`kg.write.serialize.to_triples` in an :class:`rdflib.Graph` with
    the prefixes of :data:`kg.vocab.NAMESPACES` bound: for validation, tests and
    small graphs (rdflib is slow beyond some 100k triples). To write files,
    give the networkx graph itself to :func:`kg.write.serialize.write_rdf`.

    Parameters and errors are those of :func:`kg.write.serialize.to_triples`.

    Example
    -------
    >>> from kg.link.graph import build_graph
    >>> from kg.model import Paper, Mention, PaperExtraction, Entity
    >>> ex = PaperExtraction(Paper("p1", "We propose GRPO."), [(0, 16)],
    ...     [Mention(11, 15, "GRPO", "Method", 0, 0.9, "rules", role="proposes", role_confidence=0.9)], {})
    >>> G = build_graph([ex], [Entity("GRPO", "Method", "GRPO", [], [("p1", 0)])])
    >>> rdf = to_rdf(G, base="https://example.org/kg/")
    >>> paper = vocab.paper_iri("https://example.org/kg/", "p1")
    >>> sorted(str(o) for o in rdf.objects(paper, KG.proposes))
    ['https://example.org/kg/method/GRPO']
    >>> [str(s) for s in rdf.subjects(RDF.subject, paper)]
    ['https://example.org/kg/statement/3827a9d4cae9c1c7']
    >>> len(rdf), validate(rdf)[0]
    (29, True)
    """
    rdf = Graph(bind_namespaces="none")
    for prefix, ns in vocab.NAMESPACES.items():
        rdf.bind(prefix, ns)
    terms: dict[Term, URIRef | BNode | Literal] = {}

    def term(t: Term):
        if t not in terms:
            if isinstance(t, str):
                terms[t] = BNode(t[2:]) if t.startswith("_:") else URIRef(t)
            else:
                value, datatype, language = t
                terms[t] = Literal(value, lang=language) if language else Literal(
                    value, datatype=URIRef(datatype) if datatype else None)
        return terms[t]

    blocks = itertools.chain(export_blocks(G, base), index_blocks(G, base))
    rdf.addN((term(subject), term(p), term(o), rdf) for subject, pairs in blocks for p, o in pairs)
    return rdf


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
            f"Constraint Violation in kg.write.shapes.validate:\n\tFocus Node: <{statement}>\n"
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
