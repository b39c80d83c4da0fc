"""The index: which tasks and datasets the papers applying a method or model share with it, and
which methods share the most tasks with a method, counted once and written as RDF.

Queries at conference scale read these (``kg:cooccurrence``, ``kg:taskNeighbour``: the
``.index.nt`` file beside the exports, and the store) instead of joining every paper of a task
with every paper of a method. The index is derived from the graph for queries' speed, so it is
kept out of the exports (:mod:`kg.write.triples`), which hold what was read.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import networkx as nx
import numpy as np
from rdflib.namespace import XSD

from .. import vocab
from ..link.concepts import SALIENCE_THRESHOLD
from .triples import Block, decimal_literal, node_iri, sorted_pairs, typed_literal
from ..vocab import KG

__all__ = ["index_blocks", "cooccurrences", "task_neighbours", "evaluations", "benchmark_counts", "APPLIES", "COOCCURS", "TASK_NEIGHBOURS"]

_COOCCURRENCE, _COOCCURS_WITH, _PAPER_COUNT = str(KG.cooccurrence), str(KG.cooccursWith), str(KG.paperCount)
_TASK_NEIGHBOUR, _NEIGHBOUR, _SHARED_TASKS = str(KG.taskNeighbour), str(KG.neighbour), str(KG.sharedTaskCount)
_SIMILAR_PAPER, _SIMILAR_TO, _SIMILARITY = str(KG.similarPaper), str(KG.similarTo), str(KG.similarity)
_WORD_SIMILARITY, _ENTITY_SIMILARITY, _MEANING_SIMILARITY = map(str, (KG.wordSimilarity, KG.entitySimilarity,
                                                                     KG.meaningSimilarity))
_PROPOSER_COUNT, _RESULT_COUNT = str(KG.proposerCount), str(KG.resultCount)
_EVALUATION, _EVALUATION_ON, _EVALUATION_RESULT = str(KG.evaluation), str(KG.evaluationOn), str(KG.evaluationResult)
_INTEGER = str(XSD.integer)

#: The roles by which a paper applies a method or model, and those by which it addresses a task
#: or evaluates on a dataset: a method shares a paper with a task when the paper does both.
APPLIES = ("proposes", "uses", "comparesWith")
COOCCURS = {"addresses": "Task", "evaluatesOn": "Dataset"}

#: How many of the methods sharing the most tasks with a method ``kg:taskNeighbour`` names.
TASK_NEIGHBOURS = 10


def index_blocks(G: nx.MultiDiGraph, base: str) -> Iterator[Block]:
    """The index's blocks, derived from the graph the export reads (:func:`kg.write.triples.export_blocks`):
    each method or model's co-occurrence counts with tasks and datasets (``kg:Cooccurrence``,
    :func:`cooccurrences`) and each method's task neighbours (``kg:TaskNeighbour``,
    :func:`task_neighbours`), subjects in IRI order.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        A graph from :func:`kg.link.graph.build_graph`.
    base : str
        The IRI every entity IRI starts with, as for :func:`kg.write.triples.export_blocks`.

    Yields
    ------
    kg.write.triples.Block
        Each method or model's ``kg:cooccurrence`` and ``kg:taskNeighbour`` links, then each
        link's block: the entity it reaches and the papers (``kg:paperCount``) or tasks
        (``kg:sharedTaskCount``) they share.

    Example
    -------
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("paper/p1", kind="Paper")
    >>> G.add_node("method/GRPO", kind="Method", key="GRPO", salience=2.0, papers=1)
    >>> G.add_node("task/math", kind="Task", key="math", salience=2.0, papers=1)
    >>> _ = G.add_edge("paper/p1", "method/GRPO", key="uses"), G.add_edge("paper/p1", "task/math", key="addresses")
    >>> for subject, pairs in index_blocks(G, "https://example.org/kg/"):
    ...     print(subject.removeprefix("https://example.org/kg/"), [o for _, o in pairs])
    method/GRPO ['https://example.org/kg/method/GRPO#c-a5cdeab134']
    method/GRPO#c-a5cdeab134 ['https://example.org/kg/task/math', ('1', 'http://www.w3.org/2001/XMLSchema#integer', None)]
    """
    iris = {node: node_iri(node, data, base) for node, data in G.nodes(data=True) if data["kind"] != "Paper"}
    counts = cooccurrences(G)
    neighbours = task_neighbours(G, counts)
    evaluated = evaluations(G)
    proposed, reached = benchmark_counts(G)
    yield from _similar_blocks(G, base)
    for node in sorted(set(counts) | set(neighbours) | set(evaluated), key=lambda n: iris[n]):
        iri = iris[node]
        tested = [(str(vocab.evaluation_iri(iri, dataset)), iris[dataset], results)
                  for dataset, results in sorted(evaluated.get(node, {}).items(), key=lambda item: iris[item[0]])]
        shared = sorted((iris[other], n, other) for other, n in counts.get(node, {}).items())
        links = [str(vocab.cooccurrence_iri(iri, vocab.node_of_iri(other))) for other, _, _ in shared]
        near = [(str(vocab.neighbour_iri(iri, rank)), iris[other], n)
                for rank, (other, n) in enumerate(neighbours.get(node, ()))]
        yield iri, sorted_pairs([(_COOCCURRENCE, link) for link in links]
                                + [(_TASK_NEIGHBOUR, link) for link, _, _ in near]
                                + [(_EVALUATION, link) for link, _, _ in tested])
        for link, (other, n, other_node) in zip(links, shared):
            # On a dataset, the pair also counts the papers evaluating on it that propose the method,
            # and the results the method reached on it: what methods-on-benchmark ranks by.
            counted = [(prop, typed_literal(str(found[node, other_node]), _INTEGER))
                       for prop, found in ((_PROPOSER_COUNT, proposed), (_RESULT_COUNT, reached)) if (node, other_node) in found]
            yield link, sorted_pairs([(_COOCCURS_WITH, other), (_PAPER_COUNT, typed_literal(str(n), _INTEGER)), *counted])
        for link, other, n in near:
            yield link, [(_NEIGHBOUR, other), (_SHARED_TASKS, typed_literal(str(n), _INTEGER))]
        for link, dataset, results in tested:
            yield link, sorted_pairs([(_EVALUATION_ON, dataset)]
                                     + [(_EVALUATION_RESULT, str(vocab.result_iri(base, paper_id, start)))
                                        for paper_id, start in results])


def benchmark_counts(G: nx.MultiDiGraph) -> tuple[dict, dict]:
    """For each (method or model, dataset): the papers that evaluate on the dataset and propose or
    introduce the method, and the results the method reached on the dataset; pairs of none left out.

    >>> G = nx.MultiDiGraph()
    >>> G.add_node("paper/p1", kind="Paper")
    >>> _ = G.add_edge("paper/p1", "method/m", key="proposes"), G.add_edge("paper/p1", "dataset/d", key="evaluatesOn")
    >>> G.results = [{"subject": "method/m", "dataset": "dataset/d", "paper_id": "p1", "start": 40}]
    >>> benchmark_counts(G)
    ({('method/m', 'dataset/d'): 1}, {('method/m', 'dataset/d'): 1})
    """
    proposers: dict[tuple[str, str], set] = defaultdict(set)
    for paper, data in G.nodes(data=True):
        if data.get("kind") != "Paper":
            continue
        roles = defaultdict(set)
        for _, target, role in G.out_edges(paper, keys=True):
            roles[role].add(target)
        for method in roles["proposes"] | roles["introduces"]:
            for dataset in roles["evaluatesOn"]:
                proposers[method, dataset].add(paper)
    results: dict[tuple[str, str], set] = defaultdict(set)
    for result in getattr(G, "results", ()):
        if result.get("subject") and result.get("dataset"):
            results[result["subject"], result["dataset"]].add((result["paper_id"], result["start"]))
    return ({pair: len(papers) for pair, papers in proposers.items()},
            {pair: len(found) for pair, found in results.items()})


def evaluations(G: nx.MultiDiGraph) -> dict[str, dict[str, list[tuple[str, int]]]]:
    """Each entity's ``evaluatedOn`` datasets, each with the results (paper id, offset) the
    entity reached there: what ``kg:Evaluation`` nodes hold.

    >>> G = nx.MultiDiGraph()
    >>> G.add_nodes_from(["method/m", "dataset/d"], kind="Method")
    >>> _ = G.add_edge("method/m", "dataset/d", key="evaluatedOn")
    >>> G.results = [{"subject": "method/m", "dataset": "dataset/d", "paper_id": "p1", "start": 40}]
    >>> evaluations(G)
    {'method/m': {'dataset/d': [('p1', 40)]}}
    """
    found: dict[str, dict[str, list[tuple[str, int]]]] = defaultdict(dict)
    for source, target, key in G.edges(keys=True):
        if key == "evaluatedOn":
            found[source][target] = []
    for result in getattr(G, "results", ()):
        reached = found.get(result.get("subject"), {}).get(result.get("dataset"))
        if reached is not None:
            reached.append((result["paper_id"], result["start"]))
    return {node: {d: sorted(set(r)) for d, r in datasets.items()} for node, datasets in found.items()}


def _similar_blocks(G: nx.MultiDiGraph, base: str) -> Iterator[Block]:
    """Each paper's similar papers (the ``similar`` the build wrote on its node, :mod:`kg.link.similar`),
    as ``kg:SimilarPaper`` nodes: the paper, the score and its three parts."""
    if not any(data.get("similar") for _, data in G.nodes(data=True)):
        return
    iri_of = {node: node_iri(node, data, base) for node, data in G.nodes(data=True) if data["kind"] == "Paper"}
    papers = {iri_of[node]: G.nodes[node] for node in iri_of}
    for iri in sorted(papers):
        similar = [item for item in papers[iri].get("similar") or () if item[0] in iri_of]
        if not similar:
            continue
        links = [str(vocab.similar_iri(iri, rank)) for rank in range(len(similar))]
        yield iri, sorted_pairs([(_SIMILAR_PAPER, link) for link in links])
        for link, (other, score, words, entities, meaning) in zip(links, similar):
            yield link, sorted_pairs([(_SIMILAR_TO, iri_of[other]), (_SIMILARITY, decimal_literal(score)),
                                      (_WORD_SIMILARITY, decimal_literal(words)), (_ENTITY_SIMILARITY, decimal_literal(entities)),
                                      (_MEANING_SIMILARITY, decimal_literal(meaning))])


def cooccurrences(G: nx.MultiDiGraph) -> dict[str, dict[str, int]]:
    """For each method or model, the tasks the papers applying it address and the datasets they
    evaluate on, with how many papers do: what "methods sharing tasks" and "methods on a
    benchmark" read instead of joining every paper of a task with every paper of a method.

    Only entities at or above the salience threshold (:data:`kg.link.concepts.SALIENCE_THRESHOLD`),
    on both sides: those below (one paper, a plain phrase, not proposed) would be most of the
    pairs, and the explorer and kg related leave them out too.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        A graph from :func:`kg.link.graph.build_graph`: nodes with a ``kind`` (and, for entities, a
        ``salience``), paper -> entity edges keyed by their role.

    Returns
    -------
    dict
        ``{method or model: {task or dataset: papers}}``; a method no paper applies with a
        salient task or dataset is absent.

    Example
    -------
    >>> G = nx.MultiDiGraph()
    >>> G.add_nodes_from(["p1", "p2"], kind="Paper")
    >>> G.add_node("GRPO", kind="Method", salience=2.0)
    >>> G.add_node("math", kind="Task", salience=2.0)
    >>> G.add_node("GSM8K", kind="Dataset", salience=1.0)  # below the threshold
    >>> for paper in ("p1", "p2"):
    ...     _ = G.add_edge(paper, "GRPO", key="uses"), G.add_edge(paper, "math", key="addresses")
    >>> _ = G.add_edge("p1", "GSM8K", key="evaluatesOn")
    >>> {method: dict(shared) for method, shared in cooccurrences(G).items()}
    {'GRPO': {'math': 2}}
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
            if role in APPLIES and kind in vocab.ACTOR_TYPES:
                applied.add(target)
            elif COOCCURS.get(role) == kind:
                others.add(target)
        for entity in applied:
            for other in others:
                counts[entity][other] += 1
    return counts


def task_neighbours(G: nx.MultiDiGraph, counts: dict[str, dict[str, int]]) -> dict[str, list[tuple[str, int]]]:
    """For each method, the :data:`TASK_NEIGHBOURS` other methods that share the most tasks with
    it (through :func:`cooccurrences`; ties to the more mentioned, then by node id), each with
    the number of tasks they share.

    Counting every pair through every task costs the sum over tasks of their methods squared:
    done here once, with numpy, instead of in each query.

    Parameters
    ----------
    G : networkx.MultiDiGraph
        The graph ``counts`` was read from; methods carry ``papers``, their paper count.
    counts : dict
        :func:`cooccurrences` of ``G``.

    Returns
    -------
    dict
        ``{method: [(other method, shared tasks), ...]}``, most shared first.

    Example
    -------
    >>> G = nx.MultiDiGraph()
    >>> G.add_nodes_from([("a", {"papers": 1}), ("b", {"papers": 3}), ("c", {"papers": 2})], kind="Method")
    >>> G.add_nodes_from(["t1", "t2"], kind="Task")
    >>> counts = {"a": {"t1": 1, "t2": 1}, "b": {"t1": 1}, "c": {"t1": 1, "t2": 1}}
    >>> task_neighbours(G, counts)["a"]  # c shares both tasks; b one
    [('c', 2), ('b', 1)]
    >>> task_neighbours(G, counts)["b"]  # a tie: c has more papers
    [('c', 1), ('a', 1)]
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
