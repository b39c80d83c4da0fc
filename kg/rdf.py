"""RDF: export the knowledge graph as triples, write it to disk and validate it.

The networkx graph of :mod:`kg.graph` becomes RDF using the terms of
``ontology/kg.ttl`` (mirrored by :mod:`kg.vocab`, which mints every IRI).
Every paper -> entity edge is asserted as a plain triple and, once per piece
of evidence, reified as a ``kg:Statement`` with a Web Annotation position
selector into the paper's abstract, derived from a ``kg:Sentence`` that holds
the sentence once (its text and offsets). The quote is not repeated: the
position selects it from ``dcterms:abstract``. No blank nodes are written, so
two exports of the same graph compare triple for triple.

The mapping is defined once and read straight from the networkx graph,
subject by subject: :func:`to_triples` yields it as pyoxigraph triples;
:func:`write_rdf` streams it into Turtle and N-Triples (by pyoxigraph) and
compacted JSON-LD (written here) in one pass, in time linear in the number of
triples and with memory for one chunk of them; :func:`to_rdf` loads it into
an :class:`rdflib.Graph` for validation, tests and small graphs.
"""
from __future__ import annotations

import itertools
import json
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring as _json_string
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

import networkx as nx
import numpy as np
import pyoxigraph as ox
import pyshacl
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SKOS, XSD

from . import pwc, vocab
from .concepts import SALIENCE_THRESHOLD
from .files import replacing
from .store import INDEX_SUFFIX  # the index (:func:`_index_blocks`): N-Triples of its own, whatever the formats
from .vocab import KG, OA, SCHEMA

__all__ = ["to_triples", "to_rdf", "write_rdf", "validate"]

_PREFIXES = {prefix: str(ns) for prefix, ns in vocab.NAMESPACES.items()}

# The mapping yields *blocks*: a subject and its (predicate, object) pairs, in
# plain Python values. An IRI is a str (a blank node, which only rdflib input
# has, is "_:id": no IRI starts so); a literal is a tuple (lexical form,
# datatype IRI or None for a plain string, language tag or None). JSON-LD and
# rdflib terms are made from these directly, N-Triples and Turtle from
# pyoxigraph terms made from them: reading a value back out of a pyoxigraph
# term costs more than making the term.
_Term = str | tuple[str, str | None, str | None]
_Block = tuple[str, list[tuple[str, _Term]]]

_TYPE, _LABEL = str(RDF.type), str(RDFS.label)
_IDENTIFIER, _ABSTRACT, _TITLE, _DATE, _CREATOR = map(str, (
    DCTERMS.identifier, DCTERMS.abstract, DCTERMS.title, DCTERMS.date, DCTERMS.creator))
_KEYWORDS, _URL = str(SCHEMA.keywords), str(SCHEMA.url)
_VENUE, _SOURCE_FILE, _SOURCE_LINE = str(KG.venue), str(KG.sourceFile), str(KG.sourceLine)
_PREF_LABEL, _ALT_LABEL, _PAPER_COUNT = str(SKOS.prefLabel), str(SKOS.altLabel), str(KG.paperCount)
_SUBJECT, _PREDICATE, _OBJECT = str(RDF.subject), str(RDF.predicate), str(RDF.object)
_CONFIDENCE, _VERSION, _LOOKUP_KEY = str(KG.confidence), str(KG.version), str(KG.lookupKey)
_SENTENCE, _VALUE_TEXT, _PART_OF = str(KG.Sentence), str(RDF.value), str(DCTERMS.isPartOf)
_COOCCURRENCE, _COOCCURS_WITH = str(KG.cooccurrence), str(KG.cooccursWith)
_TASK_NEIGHBOUR, _NEIGHBOUR, _SHARED_TASKS = str(KG.taskNeighbour), str(KG.neighbour), str(KG.sharedTaskCount)
_DERIVED_FROM, _ATTRIBUTED_TO = str(PROV.wasDerivedFrom), str(PROV.wasAttributedTo)
_HAS_SELECTOR, _START, _END = str(OA.hasSelector), str(OA.start), str(OA.end)
_PAPER, _STATEMENT, _EXTRACTOR = str(KG.Paper), str(KG.Statement), str(KG.Extractor)
_POSITION_SELECTOR = str(OA.TextPositionSelector)
_CLASSES = {kind: str(vocab.class_iri(kind)) for kind in vocab.ENTITY_TYPES}
_ROLES = {role: str(vocab.role_iri(role)) for role in vocab.ROLES}
_RELATIONS = {link: str(vocab.link_iri(link)) for link in vocab.LINKS}
_REACH, _SALIENCE, _AREA, _EXACT_MATCH = str(KG.paperCountWithNarrower), str(KG.salience), str(KG.researchArea), str(SKOS.exactMatch)
_RESULT, _REPORTS, _VALUE, _PREVIOUS, _UNIT, _KIND = map(str, (
    KG.Result, KG.reports, KG.value, KG.previousValue, KG.unit, KG.resultKind))
_ON_DATASET, _OF_METRIC, _ACHIEVED_BY = str(KG.onDataset), str(KG.ofMetric), str(KG.achievedBy)
_INTEGER, _DECIMAL, _GYEAR, _NON_NEGATIVE = map(str, (XSD.integer, XSD.decimal, XSD.gYear, XSD.nonNegativeInteger))
_STRING = str(XSD.string)


def to_triples(G: nx.MultiDiGraph, *, base: str = vocab.DEFAULT_BASE) -> Iterator[ox.Triple]:
    """The RDF triples of a knowledge graph built by :func:`kg.graph.build_graph`, as pyoxigraph terms.

    The export is defined once, here; :func:`to_rdf` and :func:`write_rdf`
    write the same triples. They come subject by subject, each subject's
    triples sorted (by predicate, then object) and without duplicates, the
    subjects in an order fixed by their IRIs: each paper (sorted) followed by
    the sentences its evidence cites, its statements (sorted) with their
    selectors and its results, then the entities with their relation
    statements, then the extractors, then the index (:func:`_index_blocks`).
    Nothing is held but the nodes' IRIs and the current paper's triples.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        Paper and entity nodes and paper -> entity role edges, as described
        in :mod:`kg.graph`.
    base : str, keyword-only
        The IRI every paper, entity, statement and extractor IRI starts with.

    Yields
    ------
    pyoxigraph.Triple
        Papers typed ``kg:Paper``, entities typed with their ``kg:`` class, one
        ``paper kg:<role> entity`` triple per edge and one ``kg:Statement`` per
        piece of evidence (its IRI from :func:`kg.vocab.statement_iri`, with
        a ``#pos`` selector), derived from a ``kg:Sentence`` node that holds
        the sentence once. Evidence items that share a statement IRI (same
        paper, role, entity and start) are merged, keeping the most confident.
        Each entity carries its ``kg:lookupKey`` names; the index adds, for
        methods and models, ``kg:cooccurrence`` counts of the papers they share
        with tasks and datasets, and each method's ``kg:taskNeighbour``s.

    Raises
    ------
    ValueError
        If a node's ``kind`` is neither ``"Paper"`` nor one of
        ``kg.vocab.ENTITY_TYPES``, an edge does not go from a paper to an
        entity, or an edge's role is not in ``kg.vocab.ROLES``; all checked
        before the first triple is yielded.

    Example
    -------
    >>> from kg.graph import build_graph
    >>> from kg.model import Paper, Mention, Role, PaperExtraction, Entity
    >>> ex = PaperExtraction(Paper("p1", "We propose GRPO."), [(0, 16)],
    ...     [Mention(11, 15, "GRPO", "Method", 0, 0.9, "rules")], [Role(0, "proposes", 0.9)], {})
    >>> G = build_graph([ex], [Entity("GRPO", "Method", "GRPO", [], [("p1", 0)])])
    >>> triples = list(to_triples(G, base="https://example.org/kg/"))
    >>> len(triples)
    29
    >>> print(triples[-1])
    <https://example.org/kg/extractor/rules> <http://www.w3.org/2000/01/rdf-schema#label> "rules"
    """
    terms = _OxTerms()
    for block in itertools.chain(_blocks(G, base), _index_blocks(G, base)):
        yield from terms.triples(block)


def to_rdf(G: nx.MultiDiGraph, *, base: str = vocab.DEFAULT_BASE) -> Graph:
    """The RDF graph of a knowledge graph built by :func:`kg.graph.build_graph`.

    The triples of :func:`to_triples` in an :class:`rdflib.Graph` with the
    prefixes of :data:`kg.vocab.NAMESPACES` bound: for validation, tests and
    small graphs (rdflib is slow beyond some 100k triples). To write files,
    give the networkx graph itself to :func:`write_rdf`.

    Parameters and errors are those of :func:`to_triples`.

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
    (29, True)
    """
    rdf = Graph(bind_namespaces="none")
    for prefix, ns in vocab.NAMESPACES.items():
        rdf.bind(prefix, ns)
    terms: dict[_Term, URIRef | BNode | Literal] = {}

    def term(t: _Term):
        if t not in terms:
            if isinstance(t, str):
                terms[t] = BNode(t[2:]) if t.startswith("_:") else URIRef(t)
            else:
                value, datatype, language = t
                terms[t] = Literal(value, lang=language) if language else Literal(
                    value, datatype=URIRef(datatype) if datatype else None)
        return terms[t]

    blocks = itertools.chain(_blocks(G, base), _index_blocks(G, base))
    rdf.addN((term(subject), term(p), term(o), rdf) for subject, pairs in blocks for p, o in pairs)
    return rdf


# ------------------------------------------------------------ the mapping


def _plain(value: str) -> tuple[str, None, None]:
    return (value, None, None)


def _typed(value: str, datatype: str) -> tuple[str, str, None]:
    return (value, datatype, None)


def _pair_key(pair: tuple[str, _Term]) -> tuple:
    p, o = pair
    return (p, 0, o, "", "") if isinstance(o, str) else (p, 1, o[0], o[1] or "", o[2] or "")


def _pairs(pairs: Iterable[tuple[str, _Term]]) -> list[tuple[str, _Term]]:
    """Pairs without duplicates, sorted by predicate, then object (IRIs first)."""
    return sorted(set(pairs), key=_pair_key)


def _blocks(G: nx.MultiDiGraph, base: str) -> Iterator[_Block]:
    """The export, one block per subject: each paper with its sentences, statements and results,
    then each entity with its relation statements, then the extractors."""
    iris = {node: _node_iri(node, data, base) for node, data in G.nodes(data=True)}
    # Nodes that mint the same IRI (entity keys "a b" and "a-b") share one subject.
    papers: dict[str, list[str]] = defaultdict(list)
    entities: dict[str, list[str]] = defaultdict(list)
    # The sentences relation statements cite, by paper node: written with their paper.
    cited: dict[str, set[int]] = defaultdict(set)
    for node, data in G.nodes(data=True):
        if data["kind"] == "Paper":
            papers[iris[node]].append(node)
            for _, target, role in G.out_edges(node, keys=True):
                if G.nodes[target]["kind"] == "Paper":
                    raise ValueError(f"Edge {node!r} -> {target!r} links two papers; role edges go from a "
                                     "paper to an entity.")
                vocab.role_iri(role)  # raises ValueError for an unknown role
        else:
            entities[iris[node]].append(node)
            for _, target, relation, edge in G.out_edges(node, keys=True, data=True):
                if relation not in _RELATIONS or G.nodes[target]["kind"] == "Paper":
                    raise ValueError(f"Edge {node!r} -> {target!r} ({relation}) starts at an entity; only "
                                     f"relations and the hierarchy ({', '.join(vocab.LINKS)}) link two entities.")
                for item in edge["evidence"]:
                    cited[vocab.paper_node(item["paper"])].add(item["sentence_index"])
    results: dict[str, list[dict]] = defaultdict(list)
    for result in getattr(G, "results", ()):  # a KnowledgeGraph's (kg.graph); a graph made otherwise has none
        results[result["paper"]].append(result)
    extractors: dict[str, str] = {}
    for iri in sorted(papers):
        reported = [r for node in papers[iri] for r in results.get(node, ())]
        yield from _paper_blocks(G, papers[iri], iri, iris, base, extractors, reported, cited)
        yield from _result_blocks(reported, iri, iris, base, extractors)
    for iri in sorted(entities):
        nodes = entities[iri]
        yield iri, _pairs([pair for node in nodes for pair in _entity_pairs(G.nodes[node])]
                          + [(_RELATIONS[relation], iris[target]) for node in nodes
                             for _, target, relation in G.out_edges(node, keys=True)])
        yield from _relation_statements(G, nodes, iri, iris, base, extractors)
    for name, iri in sorted(extractors.items(), key=lambda item: item[1]):
        yield iri, _pairs(_extractor_pairs(name))


def _index_blocks(G: nx.MultiDiGraph, base: str) -> Iterator[_Block]:
    """The index: what queries at conference scale read instead of joining every paper, derived
    from the export (:func:`_blocks`): each method or model's co-occurrence counts with tasks and
    datasets (``kg:Cooccurrence``) and each method's task neighbours (``kg:TaskNeighbour``)."""
    iris = {node: _node_iri(node, data, base) for node, data in G.nodes(data=True) if data["kind"] != "Paper"}
    counts = _cooccurrences(G)
    neighbours = _task_neighbours(G, counts)
    for node in sorted(set(counts) | set(neighbours), key=lambda n: iris[n]):
        iri = iris[node]
        shared = sorted((iris[other], n) for other, n in counts.get(node, {}).items())
        links = [str(vocab.cooccurrence_iri(iri, vocab.node_of_iri(other))) for other, _ in shared]
        near = [(str(vocab.neighbour_iri(iri, rank)), iris[other], n)
                for rank, (other, n) in enumerate(neighbours.get(node, ()))]
        yield iri, _pairs([(_COOCCURRENCE, link) for link in links] + [(_TASK_NEIGHBOUR, link) for link, _, _ in near])
        for link, (other, n) in zip(links, shared):
            yield link, [(_COOCCURS_WITH, other), (_PAPER_COUNT, _typed(str(n), _INTEGER))]
        for link, other, n in near:
            yield link, [(_NEIGHBOUR, other), (_SHARED_TASKS, _typed(str(n), _INTEGER))]


#: The roles by which a paper applies a method or model, and those by which it addresses a task
#: or evaluates on a dataset: a method shares a paper with a task when the paper does both.
APPLIES = ("proposes", "uses", "comparesWith")
COOCCURS = {"addresses": "Task", "evaluatesOn": "Dataset"}


def _cooccurrences(G: nx.MultiDiGraph) -> dict[str, dict[str, int]]:
    """For each method or model, the tasks the papers applying it address and the datasets they
    evaluate on, with how many papers do: what "methods sharing tasks" and "methods on a
    benchmark" read instead of joining every paper of a task with every paper of a method.

    Only entities at or above the salience threshold (:data:`kg.concepts.SALIENCE_THRESHOLD`),
    on both sides: those below (one paper, a plain phrase, not proposed) would be most of the
    pairs, and the explorer and kg related leave them out too.
    """
    salient = {node for node, data in G.nodes(data=True)
               if data["kind"] != "Paper" and data.get("salience", 0.0) >= SALIENCE_THRESHOLD}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for node, data in G.nodes(data=True):
        if data["kind"] != "Paper":
            continue
        applied, others = set(), set()
        for _, target, role in G.out_edges(node, keys=True):
            if target not in salient:
                continue
            kind = G.nodes[target]["kind"]
            if role in APPLIES and kind in ("Method", "Model"):
                applied.add(target)
            elif COOCCURS.get(role) == kind:
                others.add(target)
        for entity in applied:
            for other in others:
                counts[entity][other] += 1
    return counts


#: How many of the methods sharing the most tasks with a method ``kg:taskNeighbour`` names.
TASK_NEIGHBOURS = 10


def _task_neighbours(G: nx.MultiDiGraph, counts: dict[str, dict[str, int]]) -> dict[str, list[tuple[str, int]]]:
    """For each method, the :data:`TASK_NEIGHBOURS` other methods that share the most tasks with
    it (through :func:`_cooccurrences`; ties to the more mentioned, then by node id), each with
    the number of tasks they share.

    Counting every pair through every task costs the sum over tasks of their methods squared:
    done here once, with numpy, instead of in each query.
    """
    methods = sorted(node for node in counts if G.nodes[node]["kind"] == "Method")
    row = {node: i for i, node in enumerate(methods)}
    holders: dict[str, list[int]] = defaultdict(list)
    for node in methods:
        for other in counts[node]:
            if G.nodes[other]["kind"] == "Task":
                holders[other].append(row[node])
    lists = {task: np.array(rows) for task, rows in holders.items()}
    papers = np.array([G.nodes[node]["papers"] for node in methods])
    found = {}
    for node in methods:
        tasks = [lists[t] for t in counts[node] if t in lists]
        if not tasks:
            continue
        ids, shared = np.unique(np.concatenate(tasks), return_counts=True)
        others = ids != row[node]
        ids, shared = ids[others], shared[others]
        # Most shared tasks first, then most papers, then node id (the order of ``methods``).
        order = np.lexsort((ids, -papers[ids], -shared))[:TASK_NEIGHBOURS]
        found[node] = [(methods[ids[i]], int(shared[i])) for i in order]
    return found


def _node_iri(node: str, data: dict, base: str) -> str:
    kind = data.get("kind")
    if kind == "Paper":
        return str(vocab.paper_iri(base, data["paper_id"]))
    if kind in vocab.ENTITY_TYPES:
        return str(vocab.entity_iri(base, kind, data["key"]))
    raise ValueError(f"Node {node!r} has kind {kind!r}; expected 'Paper' or one of "
                     f"{', '.join(vocab.ENTITY_TYPES)}. Build the graph with kg.graph.build_graph.")


def _paper_blocks(G: nx.MultiDiGraph, nodes: list[str], paper: str, iris: dict[str, str], base: str,
                  extractors: dict[str, str], results: list[dict], cited: dict[str, set[int]]) -> Iterator[_Block]:
    """The paper's block (its fields, role edges and results), then each sentence cited as
    evidence, then each of its statements with its selector."""
    pairs: list[tuple[str, _Term]] = []
    statements: dict[str, list[_Block]] = {}
    sentences: set[int] = {r["sentence_index"] for r in results}
    for node in nodes:
        data = G.nodes[node]
        pairs += _paper_pairs(data)
        sentences |= cited.get(node, set())
        for _, target, role, edge in G.out_edges(node, keys=True, data=True):
            predicate, entity = _ROLES[role], iris[target]
            pairs.append((predicate, entity))
            # One statement per IRI: two items with the same start would
            # otherwise give one statement two confidences and two selectors.
            best: dict[str, dict] = {}
            for item in edge["evidence"]:
                iri = str(vocab.statement_iri(base, data["paper_id"], role, G.nodes[target]["key"], item["start"]))
                if iri not in best or item["confidence"] > best[iri]["confidence"]:
                    best[iri] = item
            for iri, item in best.items():
                name = item["extractor"]
                if name not in extractors:
                    extractors[name] = str(vocab.extractor_iri(base, name))
                sentences.add(item["sentence_index"])
                sentence = str(vocab.sentence_iri(base, data["paper_id"], item["sentence_index"]))
                blocks = _statement_blocks(iri, paper, predicate, entity, item, extractors[name], sentence)
                if iri in statements:  # the same IRI from two edges: one subject, all the triples
                    blocks = [(s, _pairs(old + new)) for (s, old), (_, new) in zip(statements[iri], blocks)]
                statements[iri] = blocks
    pairs += [(_REPORTS, str(vocab.result_iri(base, r["paper_id"], r["start"]))) for r in results]
    yield paper, _pairs(pairs)
    data = G.nodes[nodes[0]]
    spans = data.get("sentences") or ()
    for index in sorted(i for i in sentences if i < len(spans)):
        yield _sentence_block(str(vocab.sentence_iri(base, data["paper_id"], index)), paper, data["abstract"], spans[index])
    for iri in sorted(statements):
        yield from statements[iri]


def _sentence_block(iri: str, paper: str, abstract: str, span: tuple[int, int]) -> _Block:
    start, end = span
    return iri, _pairs([(_TYPE, _SENTENCE), (_VALUE_TEXT, _plain(abstract[start:end])), (_PART_OF, paper),
                        (_END, _typed(str(int(end)), _NON_NEGATIVE)), (_START, _typed(str(int(start)), _NON_NEGATIVE))])


def _decimal(value: float) -> tuple[str, str, None]:
    text = f"{value:.6f}".rstrip("0").rstrip(".")  # xsd:decimal has no exponent: never "1e-05"
    return _typed(text if text not in ("", "-0") else "0", _DECIMAL)


def _result_blocks(results: list[dict], paper: str, iris: dict[str, str], base: str,
                   extractors: dict[str, str]) -> Iterator[_Block]:
    """Each result the paper reports (``kg:Result``), with the position of its value in the abstract."""
    blocks: dict[str, list[_Block]] = {}
    for result in results:
        iri = str(vocab.result_iri(base, result["paper_id"], result["start"]))
        name = result["extractor"]
        extractors.setdefault(name, str(vocab.extractor_iri(base, name)))
        sentence = str(vocab.sentence_iri(base, result["paper_id"], result["sentence_index"]))
        pairs = [(_TYPE, _RESULT), (_VALUE, _decimal(result["value"])), (_KIND, _plain(result["kind"])),
                 (_DERIVED_FROM, sentence), (_ATTRIBUTED_TO, extractors[name]),
                 (_CONFIDENCE, _typed(f"{result['confidence']:.3f}", _DECIMAL))]
        if result["unit"]:
            pairs.append((_UNIT, _plain(result["unit"])))
        if result["previous"] is not None:
            pairs.append((_PREVIOUS, _decimal(result["previous"])))
        for prop, part in ((_ON_DATASET, "dataset"), (_OF_METRIC, "metric"), (_ACHIEVED_BY, "subject")):
            if result[part] is not None:
                pairs.append((prop, iris[result[part]]))
        position = str(vocab.selector_iri(iri))
        pairs.append((_HAS_SELECTOR, position))
        blocks[iri] = [(iri, _pairs(pairs)), _position_block(position, result)]
    for iri in sorted(blocks):
        yield from blocks[iri]


def _relation_statements(G: nx.MultiDiGraph, nodes: list[str], subject: str, iris: dict[str, str], base: str,
                         extractors: dict[str, str]) -> Iterator[_Block]:
    """The statements behind an entity's relations (``variantOf``), each read from a sentence of one paper."""
    statements: dict[str, list[_Block]] = {}
    for node in nodes:
        for _, target, relation, edge in G.out_edges(node, keys=True, data=True):
            for item in edge["evidence"]:
                key = f"{G.nodes[node]['key']}\x1f{G.nodes[target]['key']}"
                iri = str(vocab.statement_iri(base, item["paper"], relation, key, item["start"]))
                name = item["extractor"]
                extractors.setdefault(name, str(vocab.extractor_iri(base, name)))
                sentence = str(vocab.sentence_iri(base, item["paper"], item["sentence_index"]))
                statements[iri] = _statement_blocks(iri, subject, _RELATIONS[relation], iris[target], item,
                                                    extractors[name], sentence)
    for iri in sorted(statements):
        yield from statements[iri]


def _paper_pairs(data: dict) -> list[tuple[str, _Term]]:
    pairs = [(_TYPE, _PAPER), (_IDENTIFIER, _plain(data["paper_id"])), (_ABSTRACT, _plain(data["abstract"])),
             (_LABEL, _plain(data["label"]))]
    for prop, value in ((_TITLE, data.get("title")), (_VENUE, data.get("venue")),
                        (_SOURCE_FILE, data.get("source_file"))):
        if value:
            pairs.append((prop, _plain(value)))
    if data.get("source_file"):
        pairs.append((_SOURCE_LINE, _typed(str(int(data.get("source_line") or 0)), _INTEGER)))
    if data.get("year") is not None:
        pairs.append((_DATE, _typed(f"{int(data['year']):04d}", _GYEAR)))
    pairs += [(_CREATOR, _plain(author)) for author in data.get("authors") or ()]
    pairs += [(_KEYWORDS, _plain(keyword)) for keyword in data.get("keywords") or ()]
    url = _url_iri(data.get("url") or "")
    if url is not None:
        pairs.append((_URL, url))
    return pairs


def _url_iri(url: str) -> str | None:
    # A paper's URL comes from the input, not from vocab: percent-encode what
    # an IRI may not contain (spaces, quotes, <>) and drop it when it still
    # isn't an absolute IRI, rather than write a file no parser accepts.
    iri = quote(url.strip(), safe=":/?#[]@!$&'()*+,;=%~")
    try:
        ox.NamedNode(iri)
    except ValueError:
        return None
    return iri


def _entity_pairs(data: dict) -> list[tuple[str, _Term]]:
    # skos:prefLabel is an rdfs:label (SKOS says so): no rdfs:label of its own.
    names = [data["label"], *(data.get("aliases") or ())]
    pairs = [(_TYPE, _CLASSES[data["kind"]]), (_PREF_LABEL, _plain(data["label"])),
             *((_ALT_LABEL, _plain(alias)) for alias in data.get("aliases") or ()),
             *((_LOOKUP_KEY, _plain(key)) for key in dict.fromkeys(map(vocab.lookup_key, names))),
             (_PAPER_COUNT, _typed(str(int(data["papers"])), _INTEGER)),
             (_REACH, _typed(str(int(data.get("reach", data["papers"]))), _INTEGER)),
             (_SALIENCE, _decimal(data.get("salience", 0.0)))]
    if data.get("pwc"):
        pairs.append((_EXACT_MATCH, pwc.lpwc_iri(data["kind"].lower(), data["pwc"])))
    if data.get("area"):
        pairs.append((_AREA, _plain(data["area"])))
    return pairs


def _statement_blocks(iri: str, subject: str, predicate: str, entity: str, item: dict,
                      extractor: str, sentence: str) -> list[_Block]:
    """The blocks of a statement and of its position selector.

    Each already in :func:`_pairs` order (``tests/test_rdf.py`` checks), as
    sorting the bulk of the export would cost a good part of writing it.
    """
    position = str(vocab.selector_iri(iri))
    return [
        (iri, [(_OBJECT, entity), (_PREDICATE, predicate), (_SUBJECT, subject), (_TYPE, _STATEMENT),
               (_HAS_SELECTOR, position), (_ATTRIBUTED_TO, extractor), (_DERIVED_FROM, sentence),
               (_CONFIDENCE, _typed(f"{item['confidence']:.3f}", _DECIMAL))]),
        _position_block(position, item),
    ]


def _position_block(iri: str, item: dict) -> _Block:
    return iri, [(_TYPE, _POSITION_SELECTOR), (_END, _typed(str(int(item["end"])), _NON_NEGATIVE)),
                 (_START, _typed(str(int(item["start"])), _NON_NEGATIVE))]


def _extractor_pairs(name: str) -> list[tuple[str, _Term]]:
    # Extractor names may carry a version after the last slash ("rules/1").
    pairs = [(_TYPE, _EXTRACTOR), (_LABEL, _plain(name))]
    if "/" in name:
        pairs.append((_VERSION, _plain(name.rsplit("/", 1)[1])))
    return pairs


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

    def triples(self, block: _Block) -> list[ox.Triple]:
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


# ----------------------------------------------------------------- files


#: The RDF files kg writes, by extension.
RDF_FORMATS = ("ttl", "nt", "jsonld")


def write_rdf(graph: nx.MultiDiGraph | Graph, stem: str | os.PathLike, *,
              base: str = vocab.DEFAULT_BASE, formats: Iterable[str] = RDF_FORMATS,
              store: ox.Store | None = None) -> dict[str, Path]:
    """Write ``stem.ttl``, ``stem.nt`` and ``stem.jsonld`` (or those of ``formats``) and, for a
    networkx graph, its index ``stem.index.nt``, atomically; add the same triples to ``store``
    in the same pass.

    The index (co-occurrence counts and task neighbours, :func:`_index_blocks`) is derived from
    the graph for queries' speed; it is kept out of the exports, which hold what was read, and
    the store holds both. A SPARQL server loading the exports loads the index file too.

    The files are written together, chunk by chunk, and replace any
    previous ones only once all are complete (:func:`kg.files.replacing`).
    Each subject's triples are sorted and the subjects come in a fixed order
    (that of :func:`to_triples` for a networkx graph, IRI order for an rdflib
    graph), so rebuilds give identical files.

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
        _write_blocks(_blocks(graph, base), dict(zip(formats, data)), store)
        _write_blocks(_index_blocks(graph, base), {"nt": index}, store)
    return paths


#: Triples per chunk, serialized by one call to pyoxigraph per format. Small
#: chunks keep memory flat and are faster than large ones (their terms stay
#: in the CPU's cache); the calls' own cost is negligible from a few hundred.
_CHUNK = 1_000
#: Quads per bulk insertion into a store: each insertion writes new files, and the
#: bulk loader's memory grows with what it is given (1,400 papers, 495k quads: 250k per
#: insertion, 769 MB peak; 50k, 539 MB for a tenth more time).
_STORE_BATCH = 50_000


def _write_blocks(blocks: Iterable[_Block], files: dict[str, BinaryIO], store: ox.Store | None = None) -> None:
    # A chunk never splits a subject, so the Turtle of consecutive chunks
    # concatenates into the Turtle of the whole once the @prefix lines that
    # pyoxigraph repeats at the top of each are dropped.
    header = _turtle_header()
    terms = _OxTerms(make=ox.Quad)  # quads in the default graph: files and stores take them alike
    jsonld = _JsonLd(_PREFIXES)
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


def _chunks(blocks: Iterable[_Block], size: int) -> Iterator[list[_Block]]:
    """Consecutive blocks holding about ``size`` triples in all."""
    chunk: list[_Block] = []
    count = 0
    for block in blocks:
        chunk.append(block)
        count += len(block[1])
        if count >= size:
            yield chunk
            chunk, count = [], 0
    if chunk:
        yield chunk


def _rdflib_blocks(rdf: Graph) -> list[_Block]:
    def term(t) -> _Term:
        if isinstance(t, URIRef):
            return str(t)
        if isinstance(t, BNode):
            return f"_:{t}"
        if t.language:
            return (str(t), None, t.language)
        return (str(t), None if t.datatype is None or t.datatype == XSD.string else str(t.datatype), None)

    by_subject: dict[str, list[tuple[str, _Term]]] = defaultdict(list)
    for s, p, o in rdf:
        by_subject[term(s)].append((str(p), term(o)))
    return [(subject, sorted(by_subject[subject], key=_pair_key)) for subject in sorted(by_subject)]


class _JsonLd:
    """Compacted JSON-LD: our prefixes as the context, one node object per block.

    An IRI under a prefix is written ``prefix:local``; any other in full. One
    written in full whose scheme is a prefix (a paper URL ``schema:x``) would
    be read back as a compact IRI, so a node holding one is written with
    ``"@context": null`` and every IRI in full.
    """

    def __init__(self, prefixes: dict[str, str]):
        self.prefixes = dict(sorted(prefixes.items()))
        self.prefix_of = {ns: prefix for prefix, ns in self.prefixes.items()}
        # Longest namespace first: the first alternative that matches wins.
        namespaces = sorted(self.prefix_of, key=len, reverse=True)
        self.compactable = re.compile("|".join(map(re.escape, namespaces)))
        self.misread = re.compile("(?:" + "|".join(map(re.escape, self.prefixes)) + "):(?!//)")
        self.vocabulary: dict[str, str] = {}  # JSON of compacted predicates, classes and datatypes
        self.recent: dict[str, str] = {}  # JSON of other compacted IRIs: a paper's recur in its statements
        self.limit = 50_000

    def head(self) -> bytes:
        context = json.dumps(self.prefixes, ensure_ascii=False, indent=2).replace("\n", "\n  ")
        return f'{{\n  "@context": {context},\n  "@graph": [\n'.encode()

    @staticmethod
    def tail() -> bytes:
        return b"\n  ]\n}\n"

    def nodes(self, chunk: list[_Block], *, first: bool) -> bytes:
        text = ",\n".join("    " + self.node(block) for block in chunk)
        return (text if first else ",\n" + text).encode("utf-8")

    def node(self, block: _Block) -> str:
        try:
            return self._node(block, compact=True)
        except _Misread:
            return self._node(block, compact=False)

    def compact(self, iri: str) -> str:
        match = self.compactable.match(iri)
        if match and not iri.startswith("//", match.end()):
            return f"{self.prefix_of[match.group()]}:{iri[match.end():]}"
        if self.misread.match(iri):
            raise _Misread(iri)
        return iri

    def _iri(self, iri: str) -> str:
        text = self.recent.get(iri)
        if text is None:
            if len(self.recent) >= self.limit:
                self.recent.clear()
            text = self.recent[iri] = _json_string(self.compact(iri))
        return text

    def _word(self, iri: str) -> str:
        text = self.vocabulary.get(iri)
        if text is None:
            text = self.vocabulary[iri] = _json_string(self.compact(iri))
        return text

    def _node(self, block: _Block, *, compact: bool) -> str:
        # The hottest loop of the JSON-LD: lookups inlined. Written in full,
        # nothing is cached (there is no cache to read either).
        subject, pairs = block
        if compact:
            iri, word, recent, vocabulary = self._iri, self._word, self.recent, self.vocabulary
            parts = []
        else:
            iri, word, recent, vocabulary = _json_string, _json_string, {}, {}
            parts = ['"@context": null']
        parts.append('"@id": ' + iri(subject))
        types: list[str] = []
        properties: dict[str, list[str]] = {}
        for p, o in pairs:
            if isinstance(o, str):
                if p == _TYPE and not o.startswith("_:"):
                    types.append(vocabulary.get(o) or word(o))
                    continue
                value = f'{{"@id": {recent.get(o) or iri(o)}}}'
            elif o[2] is not None:
                value = f'{{"@value": {_json_string(o[0])}, "@language": {_json_string(o[2])}}}'
            elif o[1] is None:
                value = _json_string(o[0])
            else:
                value = f'{{"@value": {_json_string(o[0])}, "@type": {vocabulary.get(o[1]) or word(o[1])}}}'
            key = vocabulary.get(p) or word(p)
            values = properties.get(key)
            if values is None:
                properties[key] = [value]
            else:
                values.append(value)
        if types:
            parts.append('"@type": ' + _json_list(types))
        for key, values in properties.items():
            parts.append(f"{key}: {_json_list(values)}")
        return "{" + ", ".join(parts) + "}"


def _json_list(values: list[str]) -> str:
    return values[0] if len(values) == 1 else "[" + ", ".join(values) + "]"


class _Misread(Exception):
    """An IRI that compacted JSON-LD would misread (see :class:`_JsonLd`)."""


# ------------------------------------------------------------ validation


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
