"""Graph: papers and resolved entities as a networkx ``MultiDiGraph``.

Nodes
    ``paper/<paper id>`` (:func:`kg.vocab.paper_node`) with ``kind="Paper"``, ``label``, ``title``,
    ``abstract``, ``venue``, ``year``, ``authors``, ``keywords``, ``url``, ``decision``,
    ``source_file`` (see :func:`published_path`), ``source_line``, ``paper_id``, ``sentences``
    (the (start, end) of each sentence of the abstract).

    ``<type>/<slug>`` (e.g. ``method/group-relative-policy-optimization``, minted by
    :func:`kg.vocab.entity_node`, the tail of the entity's IRI) with ``kind`` one of
    ``vocab.ENTITY_TYPES``, ``label``, ``aliases`` (other surface forms),
    ``key`` (the resolution key), ``papers`` (how many papers mention it) and the attributes the
    concepts stage gives it (:func:`kg.link.concepts.annotate`, handed in by the build): ``reach`` (how
    many papers mention it or a narrower entity), ``salience`` and, for Papers with Code names,
    ``pwc`` (the name) and ``area`` (a task's research area).

Edges
    entity -> entity, keyed by relation (one of ``vocab.LINKS``: a relation such as
    ``variantOf``, or ``broader`` for the concept hierarchy), with ``confidence``, ``papers`` (the support: how many
    papers state it) and ``evidence`` as below plus each item's ``paper`` id.

    paper -> entity, keyed by role (one of ``vocab.ROLES``), with
    ``confidence`` (the best of its evidence) and ``evidence``: a list of
    ``{"text", "start", "end", "sentence", "sentence_index", "confidence", "extractor"}`` where
    ``abstract[start:end]`` is the mention as written and ``sentence`` is the
    sentence it occurs in (number ``sentence_index`` of the paper's), as written in the abstract.

Results
    ``G.results`` (:class:`KnowledgeGraph`): the scores papers report, each a :class:`ReportedResult`.
    A result joins a paper to up to three entities, so it is no edge.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TypedDict

import networkx as nx

from .definitions import find_definitions
from ..model import Entity, PaperExtraction, Relation
from ..text import plain_label
from ..vocab import ACTOR_TYPES, entity_node, paper_node, role_towards


class ReportedResult(TypedDict):
    """A score a paper reports (:class:`kg.model.Result`) with its ends resolved to graph nodes."""

    paper: str  # the paper's node
    paper_id: str
    value: float
    unit: str
    previous: float | None  # the value before, in "from X to Y"
    kind: str  # "score" or "gain"
    setting: str  # what sets the score apart ("zero-shot"; :mod:`kg.extract.settings`), "" for none
    metric: str | None  # entity nodes, or None where the sentence does not say
    dataset: str | None
    subject: str | None
    # Evidence, as on edges: the value as written and where, its sentence, the extractor.
    start: int
    end: int
    text: str
    sentence: str
    sentence_index: int
    confidence: float
    extractor: str


class KnowledgeGraph(nx.MultiDiGraph):
    """The graph :func:`build_graph` returns: a networkx ``MultiDiGraph`` with the ``results``
    its papers report beside the nodes and edges, for the writers (:mod:`kg.write.triples`, the explorer).

    >>> KnowledgeGraph(results=[]).results, KnowledgeGraph().subgraph([]).results
    ([], [])
    """

    def __init__(self, incoming_graph_data=None, *, results: Iterable[ReportedResult] = (), **attr):
        super().__init__(incoming_graph_data, **attr)
        self.results: list[ReportedResult] = list(results)


def published_path(file: str, *, folder: str | Path | None = None) -> str:
    """How a graph names an input file: relative to ``folder`` (default: the working folder) when
    the file is inside it, else by its name alone, so a published graph never holds a machine's
    absolute paths.

    >>> published_path("/home/ada/corpus/iclr.csv", folder="/home/ada")
    'corpus/iclr.csv'
    >>> published_path("/mnt/data/iclr.csv", folder="/home/ada")
    'iclr.csv'
    """
    path = Path(os.path.abspath(file))
    try:
        return path.relative_to(os.path.abspath(folder or os.getcwd())).as_posix()
    except ValueError:
        return path.name


def _paper_label(extraction: PaperExtraction, limit: int = 60) -> str:
    paper = extraction.paper
    if paper.title:
        return paper.title
    first = extraction.paper.abstract[: extraction.sentences[0][1]] if extraction.sentences else paper.abstract
    first = plain_label(first)
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def build_graph(extractions: Iterable[PaperExtraction], entities: Iterable[Entity],
                relations: Iterable[Relation] = (), annotations: Mapping[str, dict] | None = None) -> KnowledgeGraph:
    """The knowledge graph of ``extractions`` once their mentions are resolved to ``entities``,
    with the ``relations`` (and ``broader`` links) between entities and the results papers report.
    Each entity's node gets the attributes ``annotations`` gives its key (the concepts stage's:
    :func:`kg.link.concepts.annotate`).

    A mention that resolves to no entity (a generic phrase) adds nothing.

    Example
    -------
    >>> from kg.model import Paper, Mention, PaperExtraction, Entity
    >>> ex = PaperExtraction(Paper("p1", "We propose GRPO."), [(0, 16)],
    ...     [Mention(11, 15, "GRPO", "Method", 0, 0.9, "rules", role="proposes", role_confidence=0.9)], {})
    >>> G = build_graph([ex], [Entity("GRPO", "Method", "GRPO", [], [("p1", 0)])])
    >>> sorted(G.nodes)
    ['method/GRPO', 'paper/p1']
    >>> G.edges["paper/p1", "method/GRPO", "proposes"]["evidence"][0]["text"]
    'GRPO'
    """
    extractions, entities, relations = list(extractions), list(entities), list(relations)
    annotations = annotations or {}
    by_paper = {ex.paper.id: ex for ex in extractions}
    mention_entity: dict[tuple[str, int], Entity] = {}
    texts: dict[str, list[str]] = {}
    G = KnowledgeGraph()
    for entity in entities:
        papers = {paper_id for paper_id, _ in entity.mentions}
        G.add_node(entity_node(entity.type, entity.key), kind=entity.type, label=entity.label,
                   aliases=sorted(set(entity.aliases) - {entity.label}), key=entity.key, papers=len(papers),
                   **annotations.get(entity.key, {}))
        for ref in entity.mentions:
            mention_entity[ref] = entity

    for ex in extractions:
        paper = ex.paper
        node = paper_node(paper.id)
        G.add_node(node, kind="Paper", label=_paper_label(ex), title=paper.title, abstract=paper.abstract,
                   venue=paper.venue, year=paper.year, authors=list(paper.authors),
                   keywords=list(paper.keywords), url=paper.url, decision=paper.decision, paper_id=paper.id,
                   source_file=published_path(paper.source.file) if paper.source else "",
                   source_line=paper.source.line if paper.source else 0, sentences=list(ex.sentences))
        for index, mention in enumerate(ex.mentions):
            entity = mention_entity.get((paper.id, index))
            if entity is None or not mention.role:
                continue
            evidence = _evidence(ex, index, mention.role_confidence, sentences=_sentences(ex, texts))
            target = entity_node(entity.type, entity.key)
            role = role_towards(mention.role, mention.label, entity.type)
            if G.has_edge(node, target, role):
                data = G.edges[node, target, role]
                data["evidence"].append(evidence)
                data["confidence"] = max(data["confidence"], mention.role_confidence)
            else:
                G.add_edge(node, target, key=role, role=role, confidence=mention.role_confidence, evidence=[evidence])
        # A paper that proposes a method does not also merely use it: its other mentions ("zoneout
        # stochastically preserves ...") are evidence of the proposal.
        for _, target, role in list(G.out_edges(node, keys=True)):
            if role == "uses" and G.has_edge(node, target, "proposes"):
                G.edges[node, target, "proposes"]["evidence"] += G.edges[node, target, "uses"]["evidence"]
                G.remove_edge(node, target, "uses")

    node_of = {e.key: entity_node(e.type, e.key) for e in entities}
    for key, definition in find_definitions(extractions, mention_entity).items():
        abstract = by_paper[definition["paper"]].paper.abstract
        G.nodes[node_of[key]]["definition"] = {**definition, "sentence": abstract[definition["start"]:definition["end"]]}
    for relation in relations:
        paper_id, index = relation.evidence
        ex = by_paper[paper_id]
        evidence = {**_evidence(ex, index, relation.confidence, relation.sentence, sentences=_sentences(ex, texts)),
                    "paper": paper_id}
        if relation.rule:
            evidence["extractor"] = f"hierarchy-{relation.rule}"
        source, target = node_of[relation.source], node_of[relation.target]
        if G.has_edge(source, target, relation.relation):
            data = G.edges[source, target, relation.relation]
            data["evidence"].append(evidence)
            data["confidence"] = max(data["confidence"], relation.confidence)
            data["papers"] = len({item["paper"] for item in data["evidence"]})
        else:
            G.add_edge(source, target, key=relation.relation, role=relation.relation,
                       confidence=relation.confidence, evidence=[evidence], papers=1)

    G.results = tasks_apart([result for ex in extractions for result in _results(ex, mention_entity)])
    return G


def tasks_apart(results: list[dict]) -> list[dict]:
    """``results`` with the task of each setting kept only where the scores of its dataset and metric were
    reached in two tasks or more (COCO's AP of detection, of segmentation, of pose estimation): elsewhere
    the task is the dataset's own ("73.6% on ImageNet for image classification") and sets nothing apart."""
    # Imported here: importing kg.extract loads spaCy, which the answers that read a graph's index
    # (through KnowledgeGraph) never need.
    from ..extract.settings import tasks_in, without_tasks

    named: dict[tuple, set[str]] = {}
    for r in results:
        named.setdefault((r["dataset"], r["metric"]), set()).update(tasks_in(r["setting"]))
    for r in results:
        if len(named[(r["dataset"], r["metric"])]) < 2:
            r["setting"] = without_tasks(r["setting"])
    return results


def _results(extraction: PaperExtraction, mention_entity: dict[tuple[str, int], Entity]) -> list[ReportedResult]:
    """The paper's results whose dataset or metric resolved to an entity."""
    found = []
    paper = extraction.paper
    for result in extraction.results:
        ends = {}
        for part, types in (("metric", {"Metric"}), ("dataset", {"Dataset"}), ("subject", ACTOR_TYPES)):
            index = getattr(result, part)
            entity = mention_entity.get((paper.id, index)) if index is not None else None
            # A mention resolved into an entity of another type ("VQA" the dataset, resolved as the task)
            # cannot play this part.
            ends[part] = entity_node(entity.type, entity.key) if entity and entity.type in types else None
        if ends["dataset"] is None and ends["metric"] is None:
            continue
        start, end = extraction.sentences[result.sentence]
        found.append({"paper": paper_node(paper.id), "paper_id": paper.id, "value": result.value, "unit": result.unit,
                      "previous": result.previous, "kind": result.kind, "setting": result.setting, "start": result.start, "end": result.end,
                      "text": paper.abstract[result.start:result.end], "sentence": paper.abstract[start:end],
                      "sentence_index": result.sentence,
                      "confidence": result.confidence,
                      "extractor": extraction.mentions[result.dataset if result.dataset is not None
                                                       else result.metric].extractor, **ends})
    return found


def _sentences(extraction: PaperExtraction, texts: dict[str, list[str]]) -> list[str]:
    """The paper's sentences as written, sliced once: every piece of evidence in a sentence shares its
    string (on 100k papers, copies per evidence would cost gigabytes)."""
    found = texts.get(extraction.paper.id)
    if found is None:
        found = texts[extraction.paper.id] = [extraction.paper.abstract[s:e] for s, e in extraction.sentences]
    return found


def _evidence(extraction: PaperExtraction, index: int, confidence: float, sentence: int | None = None, *,
              sentences: list[str]) -> dict:
    mention = extraction.mentions[index]
    sentence = mention.sentence if sentence is None else sentence
    # As written in the abstract (markup included), so the text is what the offsets select.
    return {"text": extraction.paper.abstract[mention.start:mention.end], "start": mention.start, "end": mention.end,
            "sentence": sentences[sentence], "sentence_index": sentence, "confidence": confidence,
            "extractor": mention.extractor}
