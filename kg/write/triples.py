"""RDF: the knowledge graph as triples, defined once.

The networkx graph of :mod:`kg.link.graph` becomes RDF using the terms of
``ontology/kg.ttl`` (mirrored by :mod:`kg.vocab`, which mints every IRI).
Every paper -> entity edge is asserted as a plain triple and, once per piece
of evidence, reified as a ``kg:Statement`` with a Web Annotation position
selector into the paper's abstract, derived from a ``kg:Sentence`` that holds
the sentence once (its text and offsets). The quote is not repeated: the
position selects it from ``dcterms:abstract``. No blank nodes are written, so
two exports of the same graph compare triple for triple.

The mapping is read straight from the networkx graph, subject by subject, as
*blocks* of plain values (:data:`Block`), by :func:`export_blocks`. The index
derived from the export is :mod:`kg.write.cooccurrence`'s. Those who write blocks:
:mod:`kg.write.serialize` (pyoxigraph triples, Turtle, N-Triples and the store, in
one pass), :mod:`kg.write.jsonld` (JSON-LD) and :mod:`kg.write.shapes` (an
:class:`rdflib.Graph`, and SHACL validation).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from urllib.parse import quote

import networkx as nx
import pyoxigraph as ox
from rdflib.namespace import DCTERMS, PROV, RDF, RDFS, SKOS, XSD

from .. import vocab
from ..vocab import KG, OA, SCHEMA

__all__ = ["export_blocks", "node_iri", "Term", "Block", "typed_literal", "decimal_literal", "pair_key", "sorted_pairs"]

# The mapping yields *blocks*: a subject and its (predicate, object) pairs, in
# plain Python values. An IRI is a str (a blank node, which only rdflib input
# has, is "_:id": no IRI starts so); a literal is a tuple (lexical form,
# datatype IRI or None for a plain string, language tag or None). JSON-LD and
# rdflib terms are made from these directly, N-Triples and Turtle from
# pyoxigraph terms made from them: reading a value back out of a pyoxigraph
# term costs more than making the term.
Term = str | tuple[str, str | None, str | None]
Block = tuple[str, list[tuple[str, Term]]]

_TYPE, _LABEL = str(RDF.type), str(RDFS.label)
_IDENTIFIER, _ABSTRACT, _TITLE, _ISSUED, _CREATOR = map(str, (
    DCTERMS.identifier, DCTERMS.abstract, DCTERMS.title, DCTERMS.issued, DCTERMS.creator))
_KEYWORDS, _URL = str(SCHEMA.keywords), str(SCHEMA.url)
_VENUE, _DECISION, _SOURCE_FILE, _SOURCE_LINE = str(KG.venue), str(KG.decision), str(KG.sourceFile), str(KG.sourceLine)
_PREF_LABEL, _ALT_LABEL, _PAPER_COUNT = str(SKOS.prefLabel), str(SKOS.altLabel), str(KG.paperCount)
_SUBJECT, _PREDICATE, _OBJECT = str(RDF.subject), str(RDF.predicate), str(RDF.object)
_CONFIDENCE, _VERSION, _LOOKUP_KEY = str(KG.confidence), str(KG.version), str(KG.lookupKey)
_SENTENCE, _VALUE_TEXT, _PART_OF = str(KG.Sentence), str(RDF.value), str(DCTERMS.isPartOf)
_DERIVED_FROM, _ATTRIBUTED_TO = str(PROV.wasDerivedFrom), str(PROV.wasAttributedTo)
_HAS_SELECTOR, _START, _END = str(OA.hasSelector), str(OA.start), str(OA.end)
_PAPER, _STATEMENT, _EXTRACTOR = str(KG.Paper), str(KG.Statement), str(KG.Extractor)
_POSITION_SELECTOR = str(OA.TextPositionSelector)
_CLASSES = {kind: str(vocab.class_iri(kind)) for kind in vocab.ENTITY_TYPES}
_ROLES = {role: str(vocab.role_iri(role)) for role in vocab.ROLES}
_RELATIONS = {link: str(vocab.link_iri(link)) for link in vocab.LINKS}
_DEFINITION, _DEFINITION_SOURCE = str(SKOS.definition), str(KG.definitionSource)
_REACH, _SALIENCE, _AREA, _EXACT_MATCH = str(KG.paperCountWithNarrower), str(KG.salience), str(KG.researchArea), str(SKOS.exactMatch)
_RESULT, _REPORTS, _VALUE, _PREVIOUS, _UNIT, _KIND, _SETTING = map(str, (
    KG.Result, KG.reports, KG.value, KG.previousValue, KG.unit, KG.resultKind, KG.setting))
_ON_DATASET, _OF_METRIC, _ACHIEVED_BY = str(KG.onDataset), str(KG.ofMetric), str(KG.achievedBy)
_INTEGER, _DECIMAL, _GYEAR, _NON_NEGATIVE = map(str, (XSD.integer, XSD.decimal, XSD.gYear, XSD.nonNegativeInteger))


# ------------------------------------------------------------ the mapping


def _plain(value: str) -> tuple[str, None, None]:
    return (value, None, None)


def typed_literal(value: str, datatype: str) -> tuple[str, str, None]:
    """A literal of the datatype IRI ``datatype``, as a :data:`Term`."""
    return (value, datatype, None)


def pair_key(pair: tuple[str, Term]) -> tuple:
    """The sort key of a (predicate, object) pair: by predicate, then object, IRIs before literals."""
    p, o = pair
    return (p, 0, o, "", "") if isinstance(o, str) else (p, 1, o[0], o[1] or "", o[2] or "")


def sorted_pairs(pairs: Iterable[tuple[str, Term]]) -> list[tuple[str, Term]]:
    """Pairs without duplicates, sorted by predicate, then object (IRIs first)."""
    return sorted(set(pairs), key=pair_key)


def export_blocks(G: nx.MultiDiGraph, base: str) -> Iterator[Block]:
    """The export of a knowledge graph built by :func:`kg.link.graph.build_graph`, one block per subject.

    The export is defined once, here; :func:`kg.write.serialize.to_triples`,
    :func:`kg.write.serialize.write_rdf` and :func:`kg.write.shapes.to_rdf` write
    these blocks, followed by the index (:func:`kg.write.cooccurrence.index_blocks`).
    Each subject comes once, its pairs sorted (by predicate, then object) and
    without duplicates, the subjects in an order fixed by their IRIs: each
    paper (sorted) followed by the sentences its evidence cites, its
    statements (sorted) with their selectors and its results, then the
    entities with their relation statements, then the extractors. Nothing is
    held but the nodes' IRIs and the current paper's blocks.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        Paper and entity nodes and paper -> entity role edges, as described
        in :mod:`kg.link.graph`.
    base : str
        The IRI every paper, entity, statement and extractor IRI starts with.

    Yields
    ------
    Block
        Papers typed ``kg:Paper``, entities typed with their ``kg:`` class, one
        ``paper kg:<role> entity`` pair per edge and one ``kg:Statement`` per
        piece of evidence (its IRI from :func:`kg.vocab.statement_iri`, with
        a ``#pos`` selector), derived from a ``kg:Sentence`` node that holds
        the sentence once. Evidence items that share a statement IRI (same
        paper, role, entity and start) are merged, keeping the most confident.
        Each entity carries its ``kg:lookupKey`` names.

    Raises
    ------
    ValueError
        If a node's ``kind`` is neither ``"Paper"`` nor one of
        ``kg.vocab.ENTITY_TYPES``, an edge does not go from a paper to an
        entity, or an edge's role is not in ``kg.vocab.ROLES``; all checked
        before the first block is yielded.

    Example
    -------
    >>> from kg.link.graph import build_graph
    >>> from kg.model import Paper, Mention, PaperExtraction, Entity
    >>> ex = PaperExtraction(Paper("p1", "We propose GRPO."), [(0, 16)],
    ...     [Mention(11, 15, "GRPO", "Method", 0, 0.9, "rules", role="proposes", role_confidence=0.9)], {})
    >>> G = build_graph([ex], [Entity("GRPO", "Method", "GRPO", [], [("p1", 0)])])
    >>> base = "https://example.org/kg/"
    >>> [subject.removeprefix(base) for subject, _ in export_blocks(G, base)]  # doctest: +NORMALIZE_WHITESPACE
    ['paper/p1', 'paper/p1#sentence-0', 'statement/3827a9d4cae9c1c7', 'statement/3827a9d4cae9c1c7#pos',
     'method/GRPO', 'extractor/rules']
    """
    iris = {node: node_iri(node, data, base) for node, data in G.nodes(data=True)}
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
            if data.get("definition"):  # its sentence is written with its paper
                cited[vocab.paper_node(data["definition"]["paper"])].add(data["definition"]["sentence_index"])
            for _, target, relation, edge in G.out_edges(node, keys=True, data=True):
                if relation not in _RELATIONS or G.nodes[target]["kind"] == "Paper":
                    raise ValueError(f"Edge {node!r} -> {target!r} ({relation}) starts at an entity; only "
                                     f"relations and the hierarchy ({', '.join(vocab.LINKS)}) link two entities.")
                for item in edge["evidence"]:
                    cited[vocab.paper_node(item["paper"])].add(item["sentence_index"])
    results: dict[str, list[dict]] = defaultdict(list)
    for result in getattr(G, "results", ()):  # a KnowledgeGraph's (kg.link.graph); a graph made otherwise has none
        results[result["paper"]].append(result)
    extractors: dict[str, str] = {}
    for iri in sorted(papers):
        reported = [r for node in papers[iri] for r in results.get(node, ())]
        yield from _paper_blocks(G, papers[iri], iri, iris, base, extractors, reported, cited)
        yield from _result_blocks(reported, iri, iris, base, extractors)
    for iri in sorted(entities):
        nodes = entities[iri]
        yield iri, sorted_pairs([pair for node in nodes for pair in _entity_pairs(G.nodes[node])]
                                + [pair for node in nodes for pair in _definition_pairs(G.nodes[node], base)]
                                + [(_RELATIONS[relation], iris[target]) for node in nodes
                                   for _, target, relation in G.out_edges(node, keys=True)])
        yield from _relation_statements(G, nodes, iri, iris, base, extractors)
    for name, iri in sorted(extractors.items(), key=lambda item: item[1]):
        yield iri, sorted_pairs(_extractor_pairs(name))


def node_iri(node: str, data: dict, base: str) -> str:
    """The IRI of a paper or entity node of a graph from :func:`kg.link.graph.build_graph`.

    >>> node_iri("method/GRPO", {"kind": "Method", "key": "GRPO"}, "https://example.org/kg/")
    'https://example.org/kg/method/GRPO'
    """
    kind = data.get("kind")
    if kind == "Paper":
        return str(vocab.paper_iri(base, data["paper_id"]))
    if kind in vocab.ENTITY_TYPES:
        return str(vocab.entity_iri(base, kind, data["key"]))
    raise ValueError(f"Node {node!r} has kind {kind!r}; expected 'Paper' or one of "
                     f"{', '.join(vocab.ENTITY_TYPES)}. Build the graph with kg.link.graph.build_graph.")


def _paper_blocks(G: nx.MultiDiGraph, nodes: list[str], paper: str, iris: dict[str, str], base: str,
                  extractors: dict[str, str], results: list[dict], cited: dict[str, set[int]]) -> Iterator[Block]:
    """The paper's block (its fields, role edges and results), then each sentence cited as
    evidence, then each of its statements with its selector."""
    pairs: list[tuple[str, Term]] = []
    statements: dict[str, list[Block]] = {}
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
                sentences.add(item["sentence_index"])
                blocks = _statement_blocks(iri, paper, predicate, entity, item,
                                           *_provenance(item, data["paper_id"], base, extractors))
                if iri in statements:  # the same IRI from two edges: one subject, all the triples
                    blocks = [(s, sorted_pairs(old + new)) for (s, old), (_, new) in zip(statements[iri], blocks)]
                statements[iri] = blocks
    pairs += [(_REPORTS, str(vocab.result_iri(base, r["paper_id"], r["start"]))) for r in results]
    yield paper, sorted_pairs(pairs)
    data = G.nodes[nodes[0]]
    spans = data.get("sentences") or ()
    for index in sorted(i for i in sentences if i < len(spans)):
        yield _sentence_block(str(vocab.sentence_iri(base, data["paper_id"], index)), paper, data["abstract"], spans[index])
    for iri in sorted(statements):
        yield from statements[iri]


def _sentence_block(iri: str, paper: str, abstract: str, span: tuple[int, int]) -> Block:
    start, end = span
    return iri, sorted_pairs([(_TYPE, _SENTENCE), (_VALUE_TEXT, _plain(abstract[start:end])), (_PART_OF, paper),
                              (_END, typed_literal(str(int(end)), _NON_NEGATIVE)),
                              (_START, typed_literal(str(int(start)), _NON_NEGATIVE))])


def decimal_literal(value: float) -> tuple[str, str, None]:
    text = f"{value:.6f}".rstrip("0").rstrip(".")  # xsd:decimal has no exponent: never "1e-05"
    return typed_literal(text if text not in ("", "-0") else "0", _DECIMAL)


def _result_blocks(results: list[dict], paper: str, iris: dict[str, str], base: str,
                   extractors: dict[str, str]) -> Iterator[Block]:
    """Each result the paper reports (``kg:Result``), with the position of its value in the abstract."""
    blocks: dict[str, list[Block]] = {}
    for result in results:
        iri = str(vocab.result_iri(base, result["paper_id"], result["start"]))
        extractor, sentence = _provenance(result, result["paper_id"], base, extractors)
        pairs = [(_TYPE, _RESULT), (_VALUE, decimal_literal(result["value"])), (_KIND, _plain(result["kind"])),
                 (_DERIVED_FROM, sentence), (_ATTRIBUTED_TO, extractor),
                 (_CONFIDENCE, typed_literal(f"{result['confidence']:.3f}", _DECIMAL))]
        if result["unit"]:
            pairs.append((_UNIT, _plain(result["unit"])))
        if result["previous"] is not None:
            pairs.append((_PREVIOUS, decimal_literal(result["previous"])))
        if result.get("setting"):
            pairs.append((_SETTING, _plain(result["setting"])))
        for prop, part in ((_ON_DATASET, "dataset"), (_OF_METRIC, "metric"), (_ACHIEVED_BY, "subject")):
            if result[part] is not None:
                pairs.append((prop, iris[result[part]]))
        position = str(vocab.selector_iri(iri))
        pairs.append((_HAS_SELECTOR, position))
        blocks[iri] = [(iri, sorted_pairs(pairs)), _position_block(position, result)]
    for iri in sorted(blocks):
        yield from blocks[iri]


def _relation_statements(G: nx.MultiDiGraph, nodes: list[str], subject: str, iris: dict[str, str], base: str,
                         extractors: dict[str, str]) -> Iterator[Block]:
    """The statements behind an entity's relations (``variantOf``), each read from a sentence of one paper."""
    statements: dict[str, list[Block]] = {}
    for node in nodes:
        for _, target, relation, edge in G.out_edges(node, keys=True, data=True):
            for item in edge["evidence"]:
                key = f"{G.nodes[node]['key']}\x1f{G.nodes[target]['key']}"
                iri = str(vocab.statement_iri(base, item["paper"], relation, key, item["start"]))
                statements[iri] = _statement_blocks(iri, subject, _RELATIONS[relation], iris[target], item,
                                                    *_provenance(item, item["paper"], base, extractors))
    for iri in sorted(statements):
        yield from statements[iri]


def _paper_pairs(data: dict) -> list[tuple[str, Term]]:
    pairs = [(_TYPE, _PAPER), (_IDENTIFIER, _plain(data["paper_id"])), (_ABSTRACT, _plain(data["abstract"])),
             (_LABEL, _plain(data["label"]))]
    for prop, value in ((_TITLE, data.get("title")), (_VENUE, data.get("venue")),
                        (_DECISION, data.get("decision")), (_SOURCE_FILE, data.get("source_file"))):
        if value:
            pairs.append((prop, _plain(value)))
    if data.get("source_file"):
        pairs.append((_SOURCE_LINE, typed_literal(str(int(data.get("source_line") or 0)), _INTEGER)))
    if data.get("year") is not None:
        pairs.append((_ISSUED, typed_literal(f"{int(data['year']):04d}", _GYEAR)))
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


def _entity_pairs(data: dict) -> list[tuple[str, Term]]:
    # skos:prefLabel is an rdfs:label (SKOS says so): no rdfs:label of its own.
    names = [data["label"], *(data.get("aliases") or ())]
    pairs = [(_TYPE, _CLASSES[data["kind"]]), (_PREF_LABEL, _plain(data["label"])),
             *((_ALT_LABEL, _plain(alias)) for alias in data.get("aliases") or ()),
             *((_LOOKUP_KEY, _plain(key)) for key in dict.fromkeys(map(vocab.lookup_key, names))),
             (_PAPER_COUNT, typed_literal(str(int(data["papers"])), _INTEGER)),
             (_REACH, typed_literal(str(int(data.get("reach", data["papers"]))), _INTEGER)),
             (_SALIENCE, decimal_literal(data.get("salience", 0.0)))]
    if data.get("pwc"):
        pairs.append((_EXACT_MATCH, vocab.lpwc_iri(data["kind"].lower(), data["pwc"])))
    if data.get("area"):
        pairs.append((_AREA, _plain(data["area"])))
    return pairs


def _definition_pairs(data: dict, base: str) -> list[tuple[str, Term]]:
    """An entity's ``skos:definition`` and the sentence it is read from (kg.link.definitions)."""
    found = data.get("definition")
    if not found:
        return []
    return [(_DEFINITION, _plain(found["text"])),
            (_DEFINITION_SOURCE, str(vocab.sentence_iri(base, found["paper"], found["sentence_index"])))]


def _provenance(item: dict, paper_id: str, base: str, extractors: dict[str, str]) -> tuple[str, str]:
    """The IRIs of the extractor that read ``item`` (a piece of evidence or a result), noted in
    ``extractors`` (its name to its IRI), and of the sentence of paper ``paper_id`` it was read from."""
    name = item["extractor"]
    if name not in extractors:
        extractors[name] = str(vocab.extractor_iri(base, name))
    return extractors[name], str(vocab.sentence_iri(base, paper_id, item["sentence_index"]))


def _statement_blocks(iri: str, subject: str, predicate: str, entity: str, item: dict,
                      extractor: str, sentence: str) -> list[Block]:
    """The blocks of a statement and of its position selector.

    Each already in :func:`sorted_pairs` order (``tests/test_rdf.py`` checks), as
    sorting the bulk of the export would cost a good part of writing it.
    """
    position = str(vocab.selector_iri(iri))
    return [
        (iri, [(_OBJECT, entity), (_PREDICATE, predicate), (_SUBJECT, subject), (_TYPE, _STATEMENT),
               (_HAS_SELECTOR, position), (_ATTRIBUTED_TO, extractor), (_DERIVED_FROM, sentence),
               (_CONFIDENCE, typed_literal(f"{item['confidence']:.3f}", _DECIMAL))]),
        _position_block(position, item),
    ]


def _position_block(iri: str, item: dict) -> Block:
    return iri, [(_TYPE, _POSITION_SELECTOR), (_END, typed_literal(str(int(item["end"])), _NON_NEGATIVE)),
                 (_START, typed_literal(str(int(item["start"])), _NON_NEGATIVE))]


def _extractor_pairs(name: str) -> list[tuple[str, Term]]:
    # Extractor names may carry a version after the last slash ("rules/1").
    pairs = [(_TYPE, _EXTRACTOR), (_LABEL, _plain(name))]
    if "/" in name:
        pairs.append((_VERSION, _plain(name.rsplit("/", 1)[1])))
    return pairs
